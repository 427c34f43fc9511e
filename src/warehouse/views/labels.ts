/**
 * Custom-field labels as the column names of the custom-field views (custom-field-views.ts: `<stream>_event_<id>`,
 * `<stream>_labeled`).
 *
 * Labels are free text from the service. Two hazards:
 * - DuckDB's parser stops at a NUL, even inside a quoted identifier, so one NUL in one label made the view's SQL
 *   invalid. Control characters are removed before a label becomes an alias.
 * - Two fields with the same label, or a label equal to another column, need distinct names. A suffix must never
 *   produce a name some other field answers to: labels `"Dup (c_9)"`, `"Dup"`, `"Dup"` once gave c_9 the alias
 *   `Dup (c_9)`, so the column called like the first field held c_9's answers. DuckDB compares names without case,
 *   and so does everything here.
 */

// C0 and C1 control characters (NUL included) and DEL.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
// A lone UTF-16 surrogate cannot be encoded as UTF-8, which is what the SQL text becomes.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** A label as an alias may show it: control characters removed, whitespace runs as one space, trimmed. */
export function viewLabel(label: string): string {
  return label.replace(CONTROL, ' ').replace(LONE_SURROGATE, '\ufffd').replace(/\s+/g, ' ').trim();
}

/**
 * Column aliases for labels (column -> alias), for columns in the view's order.
 *
 * A label is used as it is when no other column has it as its name or label. Otherwise the alias is
 * `<label> (<column>)`, or `<label> (<column>, 2)`, `(…, 3)`, ... until it is a name no column and no label claims
 * and no earlier alias took. Columns without a usable label keep their name.
 */
export function labelAliases(columns: readonly string[], labels: ReadonlyMap<string, string>): Map<string, string> {
  const key = (name: string) => name.toLowerCase();
  const cleaned = new Map<string, string>();
  for (const column of columns) {
    const raw = labels.get(column);
    const label = raw === undefined ? '' : viewLabel(raw);
    if (label !== '') cleaned.set(column, label);
  }
  // Every name a column answers to (its own, its label) -> the columns claiming it.
  const claims = new Map<string, Set<string>>();
  const claim = (name: string, column: string) => {
    const set = claims.get(key(name)) ?? new Set<string>();
    set.add(column);
    claims.set(key(name), set);
  };
  for (const column of columns) claim(column, column);
  for (const [column, label] of cleaned) claim(label, column);

  const taken = new Set(claims.keys());
  const out = new Map<string, string>();
  const suffixed: string[] = [];
  for (const [column, label] of cleaned) {
    if (claims.get(key(label))?.size === 1) out.set(column, label);
    else suffixed.push(column);
  }
  for (const column of suffixed) {
    const label = cleaned.get(column) as string;
    let alias = `${label} (${column})`;
    for (let number = 2; taken.has(key(alias)); number++) alias = `${label} (${column}, ${number})`;
    taken.add(key(alias));
    out.set(column, alias);
  }
  return out;
}
