import type { CallKind } from '../service/credits.js';
import type { Handler } from './types.js';

export interface Route {
  method: string;
  /** e.g. `/registrants/{id}`; `{name}` matches a non-negative integer segment. */
  pattern: string;
  /** What the call costs: list calls 10 credits, anything else 1. */
  kind: Exclude<CallKind, 'token'>;
  handler: Handler;
  segments: string[];
}

export type Match =
  | { ok: true; route: Route; params: Record<string, number> }
  | { ok: false; status: 404 | 405; allow: string[] };

const DIGITS = /^\d{1,15}$/;

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, kind: Route['kind'], handler: Handler): void {
    this.routes.push({ method, pattern, kind, handler, segments: pattern.split('/').slice(1) });
  }

  match(method: string, path: string): Match {
    const parts = path.split('/').slice(1);
    const allow: string[] = [];
    for (const route of this.routes) {
      if (route.segments.length !== parts.length) continue;
      const params: Record<string, number> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const seg = route.segments[i]!;
        const part = parts[i]!;
        if (seg.startsWith('{')) {
          if (!DIGITS.test(part)) {
            ok = false;
            break;
          }
          params[seg.slice(1, -1)] = Number(part);
        } else if (seg !== part) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      if (route.method === method) return { ok: true, route, params };
      allow.push(route.method);
    }
    return allow.length > 0 ? { ok: false, status: 405, allow } : { ok: false, status: 404, allow };
  }
}
