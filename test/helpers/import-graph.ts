/**
 * Walking an import graph, shared by the tests that check what an entry point loads (library.test.ts here, and
 * test/unit/imports.test.ts). Each of them decides what counts as an import and how a specifier names a node; the
 * walk itself is the same.
 */

/** Every node reachable from `entry` (itself included), `next` giving the nodes one node leads to. */
export function reachable(entry: string, next: (node: string) => readonly string[]): Set<string> {
  const seen = new Set<string>();
  const todo = [entry];
  while (todo.length) {
    const node = todo.pop()!;
    if (seen.has(node)) continue;
    seen.add(node);
    todo.push(...next(node));
  }
  return seen;
}
