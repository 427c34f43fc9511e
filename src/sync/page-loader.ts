import { utcText } from '../../connectors/service.js';
import type { NormalizedRow, ResolvedStream, ScalarType } from '../../connectors/types.js';
import { createNormalizer, type Normalizer, type SkippedFieldSummary } from '../../normalizer/normalize.js';
import { makeSecretScrubber } from '../../normalizer/secrets.js';
import { storableRaw } from '../../normalizer/storable.js';
import { registeredSecrets } from '../api/index.js';
import type { CursorState, LoadResult, LoadSession, ScopeRef, Warehouse } from '../warehouse/index.js';
import { archivedAnswerText, archivedPageText } from './archived-page.js';
import { withoutSecretValues } from './secret-values.js';

/**
 * The most characters a held secret takes in stored text (normalizer/secrets.ts: as is, with `/` escaped, or
 * URL-encoded, which writes a character as at most 9), and never less than 4 KiB: how far around the junctions of an
 * archived answer's parts a secret is looked for (archived-page.ts).
 */
function secretReach(): number {
  let longest = 0;
  for (const s of registeredSecrets()) longest = Math.max(longest, s.length);
  return Math.max(4096, 9 * longest);
}

/**
 * The one sink from records to rows, whatever brought them: a polled page, a webhook payload, a re-read by id.
 * Header secret values out, normalize (every stored text scrubbed of the credentials live clients hold), quarantine
 * what cannot be a row into `_evsync.rejected`, add the columns new fields call for, load. Walks run concurrently;
 * the warehouse runs one operation at a time (its own exclusive queue), so each page's transaction is never
 * interleaved with another's.
 */
export class PageLoader {
  /** Per stream name, the normalizer of the resolved stream it was made for (a daemon resolves a stream again). */
  private readonly normalizers = new Map<string, { stream: ResolvedStream; normalizer: Normalizer }>();
  /** Columns added by schema evolution during this run, per stream, so each is added once. */
  private readonly addedColumns = new Map<string, Set<string>>();

  constructor(
    readonly warehouse: Warehouse,
    readonly runId: string,
    /** The run's load session (Warehouse.openLoad): pages staged and merged in batches; without one, merged at once. */
    private readonly session: LoadSession | null = null,
  ) {}

  /** Every stored value is scrubbed of the credentials live clients hold (an echoed token never lands anywhere). */
  private readonly scrub = makeSecretScrubber(registeredSecrets);

  private normalizer(stream: ResolvedStream): Normalizer {
    const cached = this.normalizers.get(stream.name);
    if (cached?.stream === stream) return cached.normalizer;
    const normalizer = createNormalizer(stream, { scrub: this.scrub });
    this.normalizers.set(stream.name, { stream, normalizer });
    return normalizer;
  }

  /** Fields each stream's records carried that were kept out of the table (a case twin of a column, a scope name). */
  skippedFields(): Record<string, readonly SkippedFieldSummary[]> {
    const out: Record<string, readonly SkippedFieldSummary[]> = {};
    for (const [name, { normalizer }] of this.normalizers) {
      const skipped = normalizer.skippedFields();
      if (skipped.length) out[name] = skipped;
    }
    return out;
  }

  /**
   * Keeps the page's records in the archive, durable before the page commits (archive/archive.ts): as the loader
   * got them, header secret values out and every held credential scrubbed from the text. Null: no archive.
   */
  private archive(
    input: {
      stream: ResolvedStream;
      quarantined?: readonly { raw: unknown; reason: string }[];
      answer?: { text: string; bytes?: Buffer | undefined; quarantinedAt: readonly number[] };
      request?: Record<string, unknown> | null;
      serverDate?: string | null;
    },
    records: readonly unknown[],
  ): number | null {
    const archive = this.warehouse.archive;
    if (!archive) return null;
    // A stream with header secrets keeps its records with their values taken out, never the answer that had them;
    // so does an answer whose \u escapes name a character of a held credential (they could spell one the text
    // scrubber would not recognise). Escapes of what no credential holds (non-ASCII text) keep the answer.
    const body =
      input.answer && !input.stream.secretValues?.length && !this.scrub.escapesMayHide(input.answer.text)
        ? archivedAnswerText(input.answer, input.quarantined ?? [], this.scrub.text, secretReach())
        : this.recordsText(input, records);
    return archive.append(this.archiveMeta(input, records.length), body);
  }

  private recordsText(
    input: { stream: ResolvedStream; quarantined?: readonly { raw: unknown; reason: string }[] },
    records: readonly unknown[],
  ): string {
    const quarantined = input.quarantined?.length
      ? withoutSecretValues(
          input.stream,
          input.quarantined.map((q) => q.raw),
        ).map((raw, i) => ({ raw, reason: input.quarantined?.[i]?.reason ?? '' }))
      : null;
    return archivedPageText({ records, ...(quarantined ? { quarantined } : {}) }, this.scrub.text);
  }

  private archiveMeta(
    input: { stream: ResolvedStream; request?: Record<string, unknown> | null; serverDate?: string | null },
    rows: number,
  ) {
    return {
      kind: 'page' as const,
      stream: input.stream.name,
      account: this.warehouse.accountLabel,
      runId: this.runId,
      at: utcText(this.warehouse.now(), 'ms'),
      serverDate: input.serverDate ?? null,
      request: input.request ?? null,
      rows,
    };
  }

  async load(input: {
    stream: ResolvedStream;
    scope: ScopeRef;
    records: readonly unknown[];
    /** Records the walk could not key: kept in `_evsync.rejected` with the page, never loaded. */
    quarantined?: readonly { raw: unknown; reason: string }[];
    /** Saved in the page's transaction; absent for walks that do not checkpoint (parent refreshes). */
    cursor?: CursorState;
    seenWalkId?: string;
    idsOnly?: boolean;
    /** The list answer the records are (page-loop.ts SourcePage.answer): the archive keeps its text as it came. */
    answer?: { text: string; bytes?: Buffer | undefined; quarantinedAt: readonly number[] };
    /** What produced the records (path, window, page; a delivery's object), kept with them in the archive. */
    request?: Record<string, unknown> | null;
    /** The answer's Date header (ISO), when it had one. */
    serverDate?: string | null;
    /** A rebuild's replay: the page's archive entry, and how its live load went (staged or merged at once). */
    replay?: { entry: number | null; staged: boolean };
    /** Versions older than their rows (late or superseded deliveries): kept in the history alone. */
    observed?: boolean;
  }): Promise<LoadResult & { seenIds: number; newColumns: string[] }> {
    const { stream, scope } = input;
    const records = withoutSecretValues(stream, input.records);
    const rows: NormalizedRow[] = [];
    this.scrub.refresh();
    const archiveEntry = input.replay ? input.replay.entry : this.archive(input, records);
    const rejected: { raw: unknown; reason: string }[] = (input.quarantined ?? []).map((q) => ({
      raw: storableRaw(withoutSecretValues(stream, [q.raw])[0], this.scrub.text),
      reason: q.reason,
    }));
    const seenIds: number[] = [];
    let newColumns: Record<string, ScalarType> | undefined;

    if (input.idsOnly) {
      // The key column's own converter: a row a walk loaded is never flagged deleted by a sweep over its id.
      const normalizer = this.normalizer(stream);
      for (const raw of records) {
        const key = normalizer.keyId(raw);
        if (key.ok) seenIds.push(key.id);
        else rejected.push({ raw: storableRaw(raw, this.scrub.text), reason: `id sweep: ${key.reason}` });
      }
    } else {
      const normalizer = this.normalizer(stream);
      const known = this.addedColumns.get(stream.name) ?? new Set<string>();
      this.addedColumns.set(stream.name, known);
      for (const raw of records) {
        const result = normalizer.normalize(raw);
        if (!result.ok) {
          rejected.push({ raw: result.raw, reason: result.reason });
          continue;
        }
        rows.push(result.row);
        if (input.seenWalkId && typeof result.row.id === 'number') seenIds.push(result.row.id);
        for (const [name, type] of Object.entries(result.extras)) {
          if (known.has(name)) continue;
          known.add(name);
          newColumns ??= {};
          newColumns[name] = type;
        }
      }
    }

    const result = await (this.session ?? this.warehouse).loadPage({
      stream,
      scope,
      runId: this.runId,
      rows,
      newColumns,
      rejected,
      seen: input.seenWalkId ? { walkId: input.seenWalkId, ids: seenIds } : undefined,
      upsert: !input.idsOnly,
      cursor: input.cursor,
      archiveEntry,
      ...(input.replay ? { stage: input.replay.staged } : {}),
      ...(input.observed ? { observed: true } : {}),
    });
    return { ...result, seenIds: seenIds.length, newColumns: Object.keys(newColumns ?? {}) };
  }
}
