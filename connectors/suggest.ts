/**
 * "Did you mean": the known name closest to a mistyped one, for stream names and event statuses. Edit distance
 * (insertions, deletions, substitutions, and two neighbours swapped), case-insensitive; a name further than about a
 * third of its length is no suggestion, so an unrelated word gets none rather than a random one.
 */

function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(rows[i - 1]![j]! + 1, rows[i]![j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, rows[i - 2]![j - 2]! + 1);
      rows[i]![j] = d;
    }
  }
  return rows[a.length]![b.length]!;
}

/** The closest of `known` to `typed`, or null when none is close enough to be what was meant. */
export function closestName(typed: string, known: readonly string[]): string | null {
  const t = typed.toLowerCase();
  let best: { name: string; d: number } | null = null;
  for (const name of known) {
    const d = distance(t, name.toLowerCase());
    if (!best || d < best.d) best = { name, d };
  }
  if (!best) return null;
  return best.d <= Math.max(1, Math.floor(Math.max(t.length, best.name.length) / 3)) ? best.name : null;
}

/** ` (did you mean "x"?)` for a typo, or `''`. */
export function didYouMean(typed: string, known: readonly string[]): string {
  const name = closestName(typed, known);
  return name ? ` (did you mean "${name}"?)` : '';
}
