/**
 * `src/warehouse/state/`: what the warehouse knows about its own syncs, each part owning its SQL: the `_evsync`
 * tables (bookkeeping.ts, state.ts), the facade's parts (runs, cursors, marks, unavailable, account, current rows),
 * delete marks, the status history and the partitions owed to readers.
 *
 * The account whose data the warehouse holds (`Warehouse.account`): base URL and client id, recorded by the first
 * run, so that a run against another account is refused instead of mixing two accounts' rows.
 */
import type { Db } from '../db/connection.js';
import * as state from './state.js';

export class AccountRecord {
  constructor(private readonly db: Db) {}

  /** The bound account, once a run recorded it. */
  binding(): Promise<state.AccountBinding | null> {
    return this.db.exclusive(() => state.accountBinding(this.db));
  }

  bind(binding: state.AccountBinding): Promise<void> {
    return this.db.exclusive(() => state.bindAccount(this.db, binding));
  }
}
