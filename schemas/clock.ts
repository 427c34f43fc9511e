/**
 * `schemas/`: zod schemas of what crosses a boundary (the wire's shapes, the configuration file, the engine's and the
 * daemon's settings with their defaults, each stream's physical columns) and the one clock; nothing here reads the
 * normalizer or the engine.
 *
 * The one clock: every component that reads the time takes a `Now` from whoever composed it (the CLI's context, a
 * test, the simulator's clock), never `Date.now` itself, so a test can fix the time and no result depends on the
 * calendar. `systemNow` is what the bin composes with.
 */

/** Milliseconds since the epoch, now. */
export type Now = () => number;

/** The machine's clock: what the bin and library users get unless they pass their own. */
export const systemNow: Now = () => Date.now();
