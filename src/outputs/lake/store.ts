/**
 * What the lake writer needs from object storage, and nothing more: whole-object get and put (conditional, for the
 * lease), file upload (multipart when large), listing and batch delete. s3-store.ts implements it with the AWS SDK;
 * keeping the writer on this interface keeps the SDK out of every module that does not talk to the network.
 */

export interface StoredObject {
  body: Buffer;
  /** The store's version tag, for conditional writes (If-Match). */
  etag: string | null;
}

export interface ListedObject {
  key: string;
  size: number;
}

export interface PutCondition {
  /** Write only if no object has this key (`If-None-Match: *`). */
  ifAbsent?: boolean;
  /** Write only if the object still has this etag (`If-Match`). */
  ifMatch?: string;
}

export interface ObjectStore {
  /** The object, or null when there is none. */
  get(key: string): Promise<StoredObject | null>;
  /**
   * Writes a small object whole. Returns its etag, or `'conflict'` when a condition did not hold (another writer
   * got there first). Stores that do not implement conditional writes ignore them: callers read back to check.
   */
  put(key: string, body: Buffer, contentType: string, condition?: PutCondition): Promise<string | 'conflict'>;
  /** Uploads a local file; multipart above the configured part size. Returns the number of parts sent (1 = one PUT). */
  upload(key: string, file: string, size: number): Promise<number>;
  /** Every object under `prefix` (which ends in `/`), in key order. */
  list(prefix: string): Promise<ListedObject[]>;
  /** Removes these objects; a key already gone is not an error. */
  remove(keys: readonly string[]): Promise<void>;
  /** `s3://bucket/key`, for messages. */
  describe(key: string): string;
  close(): void;
}
