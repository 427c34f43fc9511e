/**
 * A warehouse holds one account's data (src/warehouse/state/account.ts): the first run records which, and whatever acts
 * for another account on it is refused before it spends a credit. `sync` checks at the start of each run; the
 * daemon (`serve`, `schedule`) checks once at start, before it listens, so it never takes deliveries it could not
 * apply or fails every reconcile of its life.
 */
import type { ApiClient } from '../api/index.js';
import type { AccountBinding, Warehouse } from '../warehouse/index.js';
import { AccountMismatchError } from './errors.js';

/** The account these credentials act for (never the secret). */
export function accountOf(client: Pick<ApiClient, 'baseUrl' | 'clientId'>): AccountBinding {
  return { baseUrl: client.baseUrl, clientId: client.clientId };
}

/**
 * Refuses (AccountMismatchError) a warehouse bound to another account than `client`'s; with `bind`, binds an unbound
 * one to it. Makes no call: the client's base URL and id are what it was built with.
 */
export async function checkAccount(
  client: Pick<ApiClient, 'baseUrl' | 'clientId'>,
  warehouse: Warehouse,
  { bind }: { bind: boolean },
): Promise<void> {
  const current = accountOf(client);
  const bound = await warehouse.account.binding();
  if (bound && (bound.baseUrl !== current.baseUrl || bound.clientId !== current.clientId)) {
    throw new AccountMismatchError(
      `${warehouse.path} holds the data of client id ${bound.clientId} at ${bound.baseUrl}; these credentials are ` +
        `client id ${current.clientId} at ${current.baseUrl}. One warehouse holds one account: use another ` +
        `database for this one (--db other.duckdb or EVSYNC_DB).`,
    );
  }
  if (!bound && bind && !warehouse.readOnly) await warehouse.account.bind(current);
}
