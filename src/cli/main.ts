#!/usr/bin/env node
// The `evsync` binary: the whole program lives in program.ts so tests can run it in-process.
import { main } from './program.js';

process.exitCode = await main(process.argv.slice(2));
