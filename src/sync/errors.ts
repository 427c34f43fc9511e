/**
 * What the engine refuses before or instead of syncing: a request that cannot be right (filters that match no
 * event, a contradictory range, a warehouse of another account). The CLI maps these to exit 2 (usage).
 */
export class SyncUsageError extends Error {
  override name = 'SyncUsageError';
}

/** The warehouse holds another account's data: mixing two accounts in one file would corrupt both. */
export class AccountMismatchError extends SyncUsageError {
  override name = 'AccountMismatchError';
}
