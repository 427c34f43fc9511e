/**
 * Lake errors carry their verdict, so the CLI maps them without parsing messages:
 * - `refused`: the destination is not usable as given (a prefix evsync does not own, a missing bucket, denied
 *   credentials, no region): nothing was written, the user must change something; the CLI exits 2.
 * - `held`: another writer holds the account's lease; nothing was written; try again once it is done (exit 1).
 * - `failed`: the store failed mid-way (network, 5xx); what was committed stays readable, the next run finishes.
 */
export type LakeVerdict = 'refused' | 'held' | 'failed';

export class LakeError extends Error {
  override name = 'LakeError';
  constructor(
    message: string,
    readonly verdict: LakeVerdict,
  ) {
    super(message);
  }
}
