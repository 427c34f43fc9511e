/**
 * Stream kinds as a table: what a kind means to the planner (its items, whether its scopes have delete sweeps) and
 * to the walks (how its pages are read and checkpointed). A new kind is one entry here; the rules every kind shares
 * stay in plan.ts and page-loop.ts.
 */
import type { ResolvedStream, StreamKind } from '../../connectors/types.js';
import type { ScopeRef } from '../warehouse/index.js';
import type { WalkContext, WalkOutcome } from './page-loop.js';
import {
  type EventInfo,
  type KindPlanner,
  type PlanContext,
  planAuditItem,
  planIdSweep,
  planItemWith,
  planListItem,
  type SweepPlanner,
  type SweepPolicy,
} from './plan.js';
import { walkAudit, walkKeyset } from './walk.js';
import type { WorkItem } from './work-item.js';

interface StreamKindRules {
  /** The kind's own planning rules, after those all kinds share. */
  plan: KindPlanner;
  /** Its delete sweeps, or null when its records are never deleted (an append-only log). */
  sweep: SweepPlanner | null;
  /** Reads one item's pages, checkpointing after each. */
  walk: (item: WorkItem, ctx: WalkContext) => Promise<WalkOutcome>;
}

const STREAM_KINDS: { readonly [K in StreamKind]: StreamKindRules } = {
  list: { plan: planListItem, sweep: planIdSweep, walk: walkKeyset },
  audit: { plan: planAuditItem, sweep: null, walk: walkAudit },
};

/** The item for one stream and scope, or null when there is nothing to do. */
export function planItem(
  stream: ResolvedStream,
  scope: ScopeRef,
  ctx: PlanContext,
  extra: { event?: EventInfo; customFieldNames?: readonly string[] } = {},
): WorkItem | null {
  return planItemWith(STREAM_KINDS[stream.kind].plan, stream, scope, ctx, extra);
}

/** A delete sweep of the scope, or null when the kind has none or it is not due. */
export function planSweep(
  stream: ResolvedStream,
  scope: ScopeRef,
  ctx: PlanContext,
  policy: SweepPolicy,
  event?: EventInfo,
): WorkItem | null {
  return STREAM_KINDS[stream.kind].sweep?.(stream, scope, ctx, policy, event) ?? null;
}

export function runWalk(item: WorkItem, ctx: WalkContext): Promise<WalkOutcome> {
  return STREAM_KINDS[item.stream.kind].walk(item, ctx);
}
