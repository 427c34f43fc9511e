/**
 * The ordering rules on their own: the newest delivery wins whatever the arrival order, an older one never
 * overwrites a newer row, a delete keeps a late insert out, and changes that cannot be told apart are re-read.
 */
import { describe, expect, it } from 'vitest';
import { type Candidate, decide, type StoredState } from '../../src/sync/capture/decide.js';

const T = Date.UTC(2024, 0, 1, 12, 0, 0);
let seq = 0;
function c(p: Partial<Candidate> & { action: Candidate['action'] }): Candidate {
  seq += 1;
  return {
    seq,
    recordId: 1,
    eventId: 5,
    updatedMs: null,
    datetimeMs: null,
    complete: true,
    bodySha256: `body-${seq}`,
    ...p,
  };
}
const none = new Map<number, StoredState>();
const at = (s: number) => T + s * 1000;
const opts = { hasUpdatedAt: true, nowMs: at(100) };

describe('decide', () => {
  it('takes the newest version whatever the arrival order; the others are superseded', () => {
    const v1 = c({ action: 'update', updatedMs: at(1), datetimeMs: at(1) });
    const v2 = c({ action: 'update', updatedMs: at(2), datetimeMs: at(2) });
    for (const order of [
      [v1, v2],
      [v2, v1],
    ]) {
      const [d] = decide(order, none, opts);
      expect(d!.winner.seq).toBe(v2.seq);
      expect(d!.outcome).toBe('payload');
      expect(d!.losers.map((l) => l.seq)).toEqual([v1.seq]);
    }
  });

  it('never lets an older delivery overwrite a newer row (or one as new: that is re-read)', () => {
    const row = new Map([[1, { updatedMs: at(5), deletedMs: null }]]);
    expect(decide([c({ action: 'update', updatedMs: at(4), datetimeMs: at(4) })], row, opts)[0]!.outcome).toBe('stale');
    expect(decide([c({ action: 'update', updatedMs: at(6), datetimeMs: at(6) })], row, opts)[0]!.outcome).toBe(
      'payload',
    );
    expect(decide([c({ action: 'update', updatedMs: at(5), datetimeMs: at(5) })], row, opts)[0]!.outcome).toBe(
      'reread',
    );
    // Replaying after a reconciliation: the same version as the row means the row is current.
    const replay = { ...opts, replay: true };
    expect(decide([c({ action: 'update', updatedMs: at(5), datetimeMs: at(5) })], row, replay)[0]!.outcome).toBe(
      'unchanged',
    );
  });

  it('orders by datetime when updated_at is equal, and re-reads two bodies it cannot order', () => {
    const a = c({ action: 'update', updatedMs: at(1), datetimeMs: at(1) });
    const b = c({ action: 'update', updatedMs: at(1), datetimeMs: at(2) });
    expect(decide([b, a], none, opts)[0]!.winner.seq).toBe(b.seq);
    const x = c({ action: 'update', updatedMs: at(3), datetimeMs: at(3) });
    const y = c({ action: 'update', updatedMs: at(3), datetimeMs: at(3) });
    expect(decide([x, y], none, opts)[0]!.outcome).toBe('reread');
    // The same body twice (a duplicate within the batch) is no ambiguity.
    const z = { ...x, seq: 999 };
    expect(decide([x, z], none, opts)[0]!.outcome).toBe('payload');
  });

  it('marks a delete at its time, and keeps the record out when a late insert or update arrives', () => {
    const row = new Map([[1, { updatedMs: at(1), deletedMs: null }]]);
    const del = c({ action: 'delete', updatedMs: at(1), datetimeMs: at(3) });
    expect(decide([del], row, opts)[0]).toMatchObject({ outcome: 'deleted', deletedAtMs: at(3) });
    // The update of second 2 arrives after the delete of second 3: in one batch, or after it was applied.
    const late = c({ action: 'update', updatedMs: at(2), datetimeMs: at(2) });
    expect(decide([del, late], row, opts)[0]!.winner.seq).toBe(del.seq);
    const deleted = new Map([[1, { updatedMs: at(1), deletedMs: at(3) }]]);
    expect(decide([late], deleted, opts)[0]!.outcome).toBe('stale');
    // An insert after a delete that came first: no row yet, so the delete leaves a tombstone that keeps it out.
    const ins = c({ action: 'insert', updatedMs: null, datetimeMs: at(1) });
    const gone = c({ action: 'delete', updatedMs: null, datetimeMs: at(2) });
    expect(decide([gone], none, { ...opts, hasUpdatedAt: false })[0]).toMatchObject({ outcome: 'tombstone' });
    expect(decide([ins], new Map([[1, { updatedMs: null, deletedMs: at(2) }]]), opts)[0]!.outcome).toBe('stale');
    // A version after a delete mark brings the record back (a sweep may have marked it wrongly).
    const back = c({ action: 'update', updatedMs: at(9), datetimeMs: at(9) });
    expect(decide([back], deleted, opts)[0]!.outcome).toBe('payload');
  });

  it('re-reads what a payload cannot carry whole (a post body, selected fields)', () => {
    expect(decide([c({ action: 'update', updatedMs: at(1), complete: false })], none, opts)[0]!.outcome).toBe('reread');
    // A delete needs no record: a post delete marks the row all the same.
    const row = new Map([[1, { updatedMs: at(1), deletedMs: null }]]);
    expect(decide([c({ action: 'delete', datetimeMs: at(2), complete: false })], row, opts)[0]!.outcome).toBe(
      'deleted',
    );
  });
});
