/**
 * `src/cli/output/`: what a person reads: formats, the logger, the progress display, the plan's text, the terminal's
 * style and the CLI's streams.
 *
 * Result formatting: aligned tables for people, RFC 4180 CSV and JSON for programs. Values arrive JSON-safe from
 * the warehouse (BIGINT, DECIMAL and timestamps as exact strings), so no format ever goes through a float.
 */

export type Row = Readonly<Record<string, unknown>>;
export type OutputFormat = 'table' | 'csv' | 'json';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'csv', 'json'];

/** JSON.stringify that keeps bigint digits exactly (as strings) instead of throwing. */
export function toJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v), indent);
}

/** One cell as text. Null is `NULL` in a table (distinct from an empty string) and empty in CSV. */
function cellText(value: unknown, nullText: string): string {
  if (value === null || value === undefined) return nullText;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  if (value instanceof Date) return value.toISOString();
  return toJson(value);
}

function isNumeric(value: unknown): boolean {
  return (
    typeof value === 'number' ||
    typeof value === 'bigint' ||
    (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value) && value.length < 40)
  );
}

interface TableOptions {
  /** Cells longer than this are cut with an ellipsis (table only; CSV and JSON are never cut). */
  maxCellWidth?: number;
  /** Right-align columns whose values are all numbers. */
  alignNumbers?: boolean;
  /**
   * What a null cell shows: empty in evsync's own tables (a person reads "NULL" as a bug), `NULL` in the results of
   * the user's SQL, where it is the value.
   */
  nullText?: string;
}

/** A plain aligned table, with a header rule. Works without colour and in a pipe. */
export function formatTable(columns: readonly string[], rows: readonly Row[], opts: TableOptions = {}): string {
  const max = opts.maxCellWidth ?? 60;
  const cut = (s: string) => {
    const flat = s.replace(/\r?\n/g, '⏎');
    return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
  };
  const cells = rows.map((r) => columns.map((c) => cut(cellText(r[c], opts.nullText ?? ''))));
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]?.length ?? 0)));
  const right = columns.map(
    (c) =>
      opts.alignNumbers !== false &&
      rows.length > 0 &&
      rows.every((r) => r[c] === null || r[c] === undefined || isNumeric(r[c])),
  );
  const fmt = (row: readonly string[]) =>
    row
      .map((v, i) => (right[i] ? v.padStart(widths[i] ?? 0) : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const lines = [fmt(columns), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(fmt)];
  return `${lines.join('\n')}\n`;
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) || text !== text.trim() ? `"${text.replace(/"/g, '""')}"` : text;
}

/** RFC 4180: a header line, CRLF-free (LF) lines, fields quoted when they hold a comma, quote or newline. */
export function formatCsv(columns: readonly string[], rows: readonly Row[]): string {
  const lines = [columns.map(csvField).join(',')];
  for (const r of rows) lines.push(columns.map((c) => csvField(cellText(r[c], ''))).join(','));
  return `${lines.join('\n')}\n`;
}

/** An array of objects, keys in column order. */
export function formatJsonRows(columns: readonly string[], rows: readonly Row[]): string {
  const ordered = rows.map((r) => Object.fromEntries(columns.map((c) => [c, r[c] ?? null])));
  return `${toJson(ordered, 2)}\n`;
}

/** Column names of a warehouse result, whether it reports them as names or as `{name, type}`. */
export function columnNames(columns: readonly (string | { name: string })[]): string[] {
  return columns.map((c) => (typeof c === 'string' ? c : c.name));
}

export function formatRows(format: OutputFormat, columns: readonly string[], rows: readonly Row[]): string {
  if (format === 'csv') return formatCsv(columns, rows);
  if (format === 'json') return formatJsonRows(columns, rows);
  return formatTable(columns, rows, { nullText: 'NULL' });
}

export function formatNumber(n: number): string {
  return n.toLocaleString('en-US');
}

/** `850ms`, `12.3s`, `4m12s`, `2h05m`: short enough for a progress line. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return '?';
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)}s`;
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const sec = total % 60;
  if (h > 0) return `${h}h${String(m).padStart(2, '0')}m`;
  return `${m}m${String(sec).padStart(2, '0')}s`;
}

/** Age of a timestamp relative to now, for status output: `3m`, `2h`, `5d`. */
export function formatAge(fromMs: number, nowMs: number): string {
  const s = Math.max(0, Math.round((nowMs - fromMs) / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86400)}d`;
}
