/**
 * Re-reading changed records by id: one list call (10 credits) per scope and 100 ids, with the stream's full field
 * list, exactly the columns a sync's list walk would ask that scope for. What the service no longer returns is gone.
 */

import { IDS_PER_CALL } from '../../../connectors/service.js';
import type { ApiClient } from '../../api/index.js';
import { ACCOUNT_SCOPE, eventScope, scopedRequest } from '../scope.js';
import type { CaptureStream } from './streams.js';

interface RereadResult {
  records: unknown[];
  /** Ids asked for that the service did not return. */
  missing: number[];
  calls: number;
}

export async function rereadByIds(
  client: ApiClient,
  captureStream: CaptureStream,
  eventId: number | null,
  ids: readonly number[],
  signal?: AbortSignal,
): Promise<RereadResult> {
  const { stream } = captureStream;
  const scope = eventId === null ? ACCOUNT_SCOPE : eventScope(eventId);
  const { path, params } = scopedRequest(stream, stream.path, scope);
  const records: unknown[] = [];
  const seen = new Set<number>();
  let calls = 0;
  const unique = [...new Set(ids)].sort((a, b) => a - b);
  for (let i = 0; i < unique.length; i += IDS_PER_CALL) {
    const chunk = unique.slice(i, i + IDS_PER_CALL);
    const page = await client.list(
      path,
      {
        params,
        ids: chunk,
        fields: captureStream.fieldsFor(eventId),
        expand: stream.expandSelected.length ? [...stream.expandSelected] : undefined,
        perPage: Math.min(stream.maxPerPage, IDS_PER_CALL),
      },
      { signal },
    );
    calls += 1;
    for (const item of page.items) {
      const id = Number((item as { id?: unknown } | null)?.id);
      if (Number.isSafeInteger(id)) seen.add(id);
      records.push(item);
    }
  }
  return { records, missing: unique.filter((id) => !seen.has(id)), calls };
}
