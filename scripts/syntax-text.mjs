// What the project's syntax-tree scripts (long-functions.mjs, dead-exports.mjs) share about a file's text.

/** Where a node's own text starts: past the comments and blank lines the parser counts as its leading trivia. */
export function startOf(text, node) {
  let position = node.pos;
  const pattern = /\s+|\/\/[^\n]*|\/\*[\s\S]*?\*\//y;
  for (;;) {
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (!match || match[0].length === 0) return position;
    position += match[0].length;
  }
}
