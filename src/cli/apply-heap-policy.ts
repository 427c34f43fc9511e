/**
 * Imported first by the binary (main.ts) and the bench children: applies the heap policy while the heap is still
 * small, before the program's other modules are evaluated (see heap-policy.ts). Its only import is node:v8.
 */
import { applyHeapPolicy } from './heap-policy.js';

applyHeapPolicy();
