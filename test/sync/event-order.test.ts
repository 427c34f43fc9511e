/**
 * The order of a catch-up's work (src/sync/plan.ts eventOrder): live and upcoming events first, then past events by
 * how recently they ended, the long-past ones last, whatever order they are stored in.
 */
import { describe, expect, it } from 'vitest';
import { type EventInfo, eventOrder, type PlanContext } from '../../src/sync/plan.js';

const ctx = { now: new Date('2026-06-15T12:00:00Z'), pastEventDays: 30 } as PlanContext;

function event(id: number, startDate: string, endDate: string, status = 'closed'): EventInfo {
  return { id, status, startDate, endDate, createdAt: null };
}

describe('the order of an event’s work', () => {
  it('live and upcoming first, then past events by how recently they ended', () => {
    const events = [
      event(1, '2024-01-10', '2024-01-12'),
      event(2, '2026-06-01', '2026-06-03'),
      event(3, '2026-06-14', '2026-06-16', 'live'),
      event(4, '2026-05-01', '2026-05-02'),
      event(5, '2026-09-01', '2026-09-03', 'upcoming'),
      event(6, '2025-12-01', '2025-12-02'),
    ];
    const ordered = [...events].sort((a, b) => eventOrder(a, ctx) - eventOrder(b, ctx)).map((e) => e.id);
    expect(ordered.slice(0, 2).sort()).toEqual([3, 5]);
    expect(ordered.slice(2)).toEqual([2, 4, 6, 1]);
    // The fraction never reaches the next rank: a recent past event stays ahead of every long-past one.
    expect(eventOrder(event(7, '2026-05-10', '2026-05-16'), ctx)).toBeLessThan(2);
    expect(eventOrder(event(8, '1990-01-01', '1990-01-02'), ctx)).toBeLessThan(3);
  });
});
