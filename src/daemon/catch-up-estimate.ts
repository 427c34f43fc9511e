/**
 * What a catch-up will cost, said when the daemon starts one: its work items priced as the planner prices them (a
 * dry run of the engine: no call, nothing written), and how long that is at the limit the service reported. The
 * figure is a lower bound where the warehouse has not learnt a scope's size (an item is priced at its last pages,
 * one page when never read).
 */
import type { ApiClient } from '../api/index.js';
import { syncEngine } from '../sync/run.js';
import type { SyncOptions } from '../sync/types.js';
import type { Warehouse } from '../warehouse/index.js';

export interface CatchUpEstimate {
  items: number;
  credits: number;
  /** Of those, the work of live and upcoming events and of account-wide streams: planned first. */
  firstItems: number;
  firstCredits: number;
  /** Windows of the reported limit the catch-up needs beyond what is left in this one (0: it fits now). */
  windows: number;
  windowMs: number;
  limit: number;
}

/** Prices the run `options` describe, and the part of it planned first (live and upcoming events, account-wide streams). */
export async function estimateCatchUp(
  client: ApiClient,
  warehouse: Warehouse,
  options: SyncOptions,
): Promise<CatchUpEstimate> {
  let items = 0;
  let credits = 0;
  let firstItems = 0;
  let firstCredits = 0;
  await syncEngine(client, warehouse, options, {
    execution: 'dry',
    onItem: (item) => {
      items += 1;
      credits += item.price;
      // Priorities are tier * 10 + the event's order: live and upcoming events (order 0) and account-wide streams.
      if (item.priority % 10 < 1) {
        firstItems += 1;
        firstCredits += item.price;
      }
    },
  });
  const ledger = client.ledger.snapshot();
  const beyond = Math.max(0, credits - ledger.remaining);
  return {
    items,
    credits,
    firstItems,
    firstCredits,
    windows: Math.ceil(beyond / Math.max(1, ledger.limit)),
    windowMs: ledger.windowMs,
    limit: ledger.limit,
  };
}

/** The estimate as the daemon says it at start. */
export function estimateLine(e: CatchUpEstimate): string {
  const minutes = Math.round(e.windowMs / 60_000);
  const time =
    e.windows === 0
      ? 'it fits in the credits left in this window'
      : `about ${e.windows} more window(s) of ${e.limit.toLocaleString('en-US')} credits per ${minutes} min (~${e.windows * minutes} min)`;
  return (
    `catch-up: ${e.items} work items, at least ${e.credits.toLocaleString('en-US')} credits ` +
    `(${e.firstItems} items, ${e.firstCredits.toLocaleString('en-US')} credits, for live and upcoming events and account-wide streams, first); ${time}`
  );
}
