/**
 * Which undeclared fields of a record may become columns (schema evolution), decided the way DuckDB compares
 * names: case-insensitively. `"Email"` beside a column `email` would make the warehouse run `ADD COLUMN "Email"`,
 * which DuckDB refuses ("already exists"), and the page of every record carrying it would fail on every retry.
 *
 * A field is kept out of the row, and reported, when its name:
 * - equals a column of the table in any case but is not that column's source (`Email` for `email`, `gender_id`
 *   beside the choice `gender` that fills `gender_id`);
 * - equals a system column (`_synced_at`, `_run_id`, `_deleted_at`), the stream's key or scope column, or
 *   `event_id`, in any case: `event_id` marks event-scoped tables (Parquet export partitions by it), so an
 *   account-scoped stream must not grow one;
 * - differs only in case from an undeclared field adopted earlier in the run (the first spelling is the column);
 * - cannot be a column at all (spaces, non-ASCII, longer than 63 characters, or a member every object inherits).
 * `_`-prefixed members (`_links`, `_meta`) are the service's envelope: ignored without a report.
 */
import type { ResolvedStream } from '../connectors/types.js';
import type { ColumnSpec } from '../schemas/columns.js';

/** The system columns the warehouse adds to every stream table (src/warehouse/load/ddl.ts creates them). */
export const SYSTEM_COLUMNS = ['_synced_at', '_run_id', '_deleted_at'] as const;

/** The column that makes a table event-scoped. */
const EVENT_SCOPE_COLUMN = 'event_id';

// Which names schema evolution may turn into columns is the catalogue's rule (connectors import nothing from here).
import { isExtraFieldName } from '../connectors/types.js';

/** What to do with an undeclared field: make it a column, ignore it (envelope), or keep it out and say why. */
type FieldVerdict = 'extra' | 'ignore' | { readonly reason: string };

/** The undeclared-field rules of one stream for one run (it remembers the spelling of each adopted field). */
export class ExtraFieldNames {
  /** Lowercased name -> why it is taken. */
  private readonly taken = new Map<string, string>();
  /** Exact names of columns that no field of that name feeds (`gender_id`): name -> the field that does. */
  private readonly derived = new Map<string, string>();
  /** Lowercased name -> spelling of the undeclared field adopted under it this run. */
  private readonly adopted = new Map<string, string>();

  constructor(stream: ResolvedStream, columns: readonly ColumnSpec[]) {
    const sources = new Set(columns.map((c) => c.source));
    for (const c of columns) {
      if (!sources.has(c.name)) this.derived.set(c.name, c.source);
      this.take(c.name, `column "${c.name}"`);
      this.take(c.source, `field "${c.source}"`);
    }
    for (const s of SYSTEM_COLUMNS) this.take(s, `system column "${s}"`);
    for (const k of stream.key) this.take(k, `key column "${k}"`);
    const scope = typeof stream.scope === 'object' ? stream.scope.column : null;
    if (scope !== null) this.take(scope, `scope column "${scope}"`);
    if (stream.scope !== 'event') {
      this.take(EVENT_SCOPE_COLUMN, `"${EVENT_SCOPE_COLUMN}", which only event-scoped tables carry`);
    }
  }

  private take(name: string, why: string): void {
    const lower = name.toLowerCase();
    if (!this.taken.has(lower)) this.taken.set(lower, why);
  }

  /** The verdict on a field the stream does not declare (not the source of any column). */
  classify(name: string): FieldVerdict {
    if (name.charCodeAt(0) === 95 /* _ */) return 'ignore';
    const from = this.derived.get(name);
    if (from !== undefined) return { reason: `names the column filled from field "${from}"` };
    if (!isExtraFieldName(name)) return { reason: 'name cannot be a column' };
    const lower = name.toLowerCase();
    const why = this.taken.get(lower);
    if (why !== undefined) return { reason: `same name as ${why} when case is ignored, as DuckDB does` };
    const first = this.adopted.get(lower);
    if (first !== undefined && first !== name) {
      return { reason: `same name as field "${first}" (added first) when case is ignored, as DuckDB does` };
    }
    return 'extra';
  }

  /** Records that `name` became a column, so other spellings of it are refused from now on. */
  adopt(name: string): void {
    const lower = name.toLowerCase();
    if (!this.adopted.has(lower)) this.adopted.set(lower, name);
  }
}
