import type { ResolvedStream } from '../../connectors/types.js';
import type { CursorState, ScopeRef } from '../warehouse/index.js';
import type { WalkMode } from './types.js';

/** One unit of work: a stream over one scope in one window. */
export interface WorkItem {
  stream: ResolvedStream;
  scope: ScopeRef;
  mode: WalkMode;
  /** The cursor row this walk checkpoints into (the scope key, or `<scope>/sweep` for delete sweeps). */
  cursorKey: string;
  /** Lower bound of the window (inclusive), null for a walk from the beginning. */
  from: string | null;
  /** Upper bound (exclusive): the signpost. */
  to: string;
  /** The open walk this item continues, when an earlier run stopped inside it. */
  resume: CursorState['walk'];
  /** The cursor row as it was when planned (kept so completion preserves what the walk does not change). */
  previous: CursorState | null;
  /** Custom fields of this scope to request by name. */
  customFieldNames?: readonly string[];
  /** Credits the item is expected to cost. */
  price: number;
  /** Lower runs first. */
  priority: number;
}

/** What a counting walk learned of an item: its first answer's `_meta`, and how far it read (the pages are kept). */
export interface CountedItem {
  /** Null when the answer gave none (the spec lists it; the service may leave it out). */
  totalCount: number | null;
  pageCount: number | null;
  /** The page size granted (`_meta.perPage`): it may be smaller than the one asked for. */
  perPage: number | null;
  pagesRead: number;
  /** The walk read the whole item (nothing left for the run it prices). */
  complete: boolean;
}
