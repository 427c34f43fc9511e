import type { CustomDef, Rec } from '../core/record.js';
import { defFromRecord } from '../data/defs.js';
import type { World } from '../data/world.js';
import { forbidden, notFound } from '../http/errors.js';
import type { StreamSpec } from '../schema/streams.js';
import type { Partition } from '../store/partition.js';

export interface Found {
  part: Partition;
  pos: number;
  rec: Rec;
}

/** A live record by id, checked against the caller's account: 404 when unknown or deleted, 403 when foreign. */
export function findOwned(world: World, stream: string, id: number, account: number): Found {
  const part = world.table(stream).ownerOf(id);
  if (!part?.owns(id)) throw notFound();
  if (part.account !== account) throw forbidden();
  const pos = part.find(id);
  if (pos < 0) throw notFound();
  return { part, pos, rec: part.record(pos) };
}

/** A live record by id regardless of account, or undefined. */
export function findAny(world: World, stream: string, id: number): Found | undefined {
  const part = world.table(stream).ownerOf(id);
  if (!part) return undefined;
  const pos = part.find(id);
  return pos < 0 ? undefined : { part, pos, rec: part.record(pos) };
}

/** Live records of a partition, in id order. */
export function liveRecords(part: Partition | undefined): Rec[] {
  if (!part) return [];
  const out: Rec[] = [];
  for (const pos of part.positions()) out.push(part.record(pos));
  return out;
}

/** The custom field definitions (`c_<id>`) that currently apply to a partition's records. */
export function customDefs(world: World, spec: StreamSpec, part: Partition): CustomDef[] {
  if (!spec.custom) return [];
  const defsTable = world.table(spec.custom);
  const defsPart = spec.custom === 'event_questions' ? defsTable.scope(part.scopeId) : defsTable.scope(part.account);
  return liveRecords(defsPart).map(defFromRecord);
}

/**
 * Applies changes to a live record as an overlay copy. With `touchedAt`, `updated_at` moves too (for streams that
 * have it).
 */
export function updateRecord(found: Found, changes: Rec, touchedAt?: string): Rec {
  const rec: Rec = { ...found.rec, ...changes };
  if (touchedAt !== undefined && 'updated_at' in found.part.spec.fields) rec.updated_at = touchedAt;
  found.part.update(found.pos, rec);
  found.rec = rec;
  return rec;
}
