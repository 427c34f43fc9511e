import { CUSTOM, type Json, type Rec } from '../core/record.js';
import type { FieldKind } from '../schema/kinds.js';
import type { Partition } from '../store/partition.js';
import { compareScalars, scalarOf } from './compare.js';
import type { ListParams } from './params.js';
import { type Condition, testSeconds, testValue, usesSeconds } from './search.js';

export interface ListResult {
  /** Positions of the requested page, in answer order. */
  positions: number[];
  total: number;
  pageCount: number;
  /** Records already built while filtering or sorting, reused for the page. */
  record(pos: number): Rec;
}

/**
 * Runs a list query over one partition. Positions are in id order already, so the usual sync query
 * (`updated_at` window, `id > N`, `sort=id`) is a binary search plus one pass over compact data: no record is built
 * except those of the page.
 */
export function runList(
  part: Partition,
  params: ListParams,
  search: Condition[],
  /** Conditions that always apply with AND (the audit log's time window). */
  required: Condition[],
  kindOf: (field: string) => FieldKind | undefined,
): ListResult {
  const memo = new Map<number, Rec>();
  const record = (pos: number): Rec => {
    let r = memo.get(pos);
    if (!r) {
      r = part.record(pos);
      memo.set(pos, r);
    }
    return r;
  };
  const hasId = part.spec.hasId;
  const fieldValue = (pos: number, field: string): Json | undefined => {
    if (field === 'id' && hasId) return part.idAt(pos);
    if (field.startsWith('c_')) return record(pos)[CUSTOM]?.[field];
    return record(pos)[field];
  };
  for (const c of [...search, ...required]) {
    c.fast = usesSeconds(c) && (c.field === 'updated_at' || c.field === 'created_at');
  }
  const test = (c: Condition, pos: number): boolean => {
    if (c.bound) return true;
    if (c.fast) return testSeconds(c, part.timeAt(pos, c.field));
    return testValue(c, fieldValue(pos, c.field));
  };

  // Narrow the scanned range with id bounds that must hold.
  let lo = 0;
  let hi = part.size;
  const andConditions = params.or && search.length > 1 ? required : [...required, ...search];
  if (hasId) {
    for (const c of andConditions) {
      if (c.field !== 'id' || c.num === null) continue;
      const n = c.num;
      if (c.op === '>') lo = Math.max(lo, part.lowerBound(Math.floor(n) + 1));
      else if (c.op === '>=') lo = Math.max(lo, part.lowerBound(Math.ceil(n)));
      else if (c.op === '<') hi = Math.min(hi, part.lowerBound(Math.ceil(n)));
      else if (c.op === '<=') hi = Math.min(hi, part.lowerBound(Math.floor(n) + 1));
      else continue;
      // Positions are in id order, so the range now enforces the condition exactly.
      c.bound = true;
    }
  }

  let candidates: number[] | null = null;
  if (params.ids) {
    const found = new Set<number>();
    for (const id of params.ids) {
      const pos = part.find(id);
      if (pos >= lo && pos < hi) found.add(pos);
    }
    candidates = [...found].sort((a, b) => a - b);
  }

  const matched: number[] = [];
  const orMode = params.or && search.length > 1;
  const count = candidates ? candidates.length : hi - lo;
  // A plain indexed loop: this runs over whole scopes (tens of thousands of rows) on every page request.
  for (let k = 0; k < count; k++) {
    const pos = candidates ? candidates[k]! : lo + k;
    if (!candidates && !part.isLive(pos)) continue;
    let ok = true;
    for (const c of required) {
      if (!test(c, pos)) {
        ok = false;
        break;
      }
    }
    if (!ok) continue;
    if (orMode) {
      ok = search.some((c) => test(c, pos));
    } else {
      for (const c of search) {
        if (!test(c, pos)) {
          ok = false;
          break;
        }
      }
    }
    if (ok) matched.push(pos);
  }

  const ordered = order(matched, params.sort, part, fieldValue, kindOf);
  const total = ordered.length;
  const pageCount = Math.ceil(total / params.perPage);
  const start = (params.page - 1) * params.perPage;
  return { positions: ordered.slice(start, start + params.perPage), total, pageCount, record };
}

function order(
  matched: number[],
  sort: ListParams['sort'],
  part: Partition,
  fieldValue: (pos: number, field: string) => Json | undefined,
  kindOf: (field: string) => FieldKind | undefined,
): number[] {
  if (sort.length === 0) return matched;
  if (sort.length === 1 && sort[0]!.field === 'id' && part.spec.hasId) {
    return sort[0]!.desc ? matched.reverse() : matched;
  }
  const keys = sort.map(({ field }) => {
    const kind = kindOf(field) ?? 'str';
    const fast = kind === 'ts' && (field === 'updated_at' || field === 'created_at');
    return matched.map((pos) => (fast ? part.timeAt(pos, field) : scalarOf(fieldValue(pos, field) ?? null, kind)));
  });
  const index = matched.map((_, i) => i);
  index.sort((a, b) => {
    for (let k = 0; k < sort.length; k++) {
      const d = compareScalars(keys[k]![a]!, keys[k]![b]!);
      if (d !== 0) return sort[k]!.desc ? -d : d;
    }
    return a - b;
  });
  return index.map((i) => matched[i]!);
}
