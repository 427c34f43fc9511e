/** Small helpers to write HTML and SVG as text safely: every value from the document goes through `esc`. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function esc(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/** `1,234` (en-US grouping, like the text output); a dash for unknown. */
export function num(n: number | null | undefined): string {
  return n === null || n === undefined ? '–' : n.toLocaleString('en-US');
}

/** A duration in words short enough for a table cell: `12 s`, `4 min`, `2 h 05 min`, `3 d 4 h`. */
export function span(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')} min`;
  return `${Math.floor(s / 86_400)} d ${Math.floor((s % 86_400) / 3600)} h`;
}

/** `HH:MM` of a UTC text (`YYYY-MM-DD HH:MM:SS`), or the text itself when it has another shape. */
export function clock(text: string | null | undefined): string {
  if (!text) return '–';
  const m = /^\d{4}-\d\d-\d\d[ T](\d\d:\d\d)/.exec(text);
  return m ? m[1]! : text;
}
