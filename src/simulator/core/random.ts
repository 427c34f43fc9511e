/**
 * Deterministic randomness. Records are generated lazily from (seed, stream, index), so every value must be a pure
 * function of its inputs: no shared generator whose state depends on the order of requests.
 */

/** Finalizer of MurmurHash3: spreads the bits of a 32-bit integer. */
export function mix32(input: number): number {
  let h = input | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Hash of up to four integers (ids stay below 2^31 here). */
export function hash4(a: number, b = 0, c = 0, d = 0): number {
  let h = mix32(a ^ 0x9e3779b9);
  h = mix32(h ^ Math.imul(b | 0, 0x27d4eb2d));
  h = mix32(h ^ Math.imul(c | 0, 0x165667b1));
  h = mix32(h ^ Math.imul(d | 0, 0x61c88647));
  return h;
}

/** A uniform number in [0, 1) from a hash of the inputs. */
export function unit(a: number, b = 0, c = 0, d = 0): number {
  return hash4(a, b, c, d) / 4294967296;
}

/** FNV-1a of a string: turns stream names and tags into hash inputs. */
export function tag(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const HEX_PAIRS = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** Eight hex digits of a 32-bit integer (faster than toString(16) + padStart on the record hot path). */
export function hex8(n: number): string {
  return (
    HEX_PAIRS[(n >>> 24) & 255]! + HEX_PAIRS[(n >>> 16) & 255]! + HEX_PAIRS[(n >>> 8) & 255]! + HEX_PAIRS[n & 255]!
  );
}

/** A small sequential generator (mulberry32) for the values of one record. */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Picks by weight; `weights` parallels `items`. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    let total = 0;
    for (const w of weights) total += w;
    let r = this.next() * total;
    for (let i = 0; i < items.length; i++) {
      r -= weights[i] ?? 0;
      if (r < 0) return items[i] as T;
    }
    return items[items.length - 1] as T;
  }

  /** `count` distinct items, in the order of `items` (a selection scan: no sets, no sorting). */
  sample<T>(items: readonly T[], count: number): T[] {
    const out: T[] = [];
    let needed = count;
    for (let i = 0, left = items.length; i < items.length && needed > 0; i++, left--) {
      if (this.next() * left < needed) {
        out.push(items[i] as T);
        needed--;
      }
    }
    return out;
  }

  hex(length: number): string {
    let out = '';
    while (out.length < length)
      out += Math.floor(this.next() * 4294967296)
        .toString(16)
        .padStart(8, '0');
    return out.slice(0, length);
  }
}
