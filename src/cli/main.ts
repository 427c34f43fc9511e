#!/usr/bin/env node
// The `evsync` binary: the whole program lives in program.ts so tests can run it in-process.
// First, while the heap is small: Node's heap policy (apply-heap-policy.ts says why it must come first).
import './apply-heap-policy.js';
import { main } from './program.js';

process.exitCode = await main(process.argv.slice(2));
