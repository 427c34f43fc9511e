/**
 * Injected delivery faults: drops, duplicates, reordering and delays, each at its own seeded rate. Each phase gives
 * a fresh webhook the new contacts of a few hundred changes (insert ids only grow, so arrival order shows any
 * reordering), then holds what the receiver got against the ground truth and the rate.
 */
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerSimulatorCommand } from '../../src/cli/commands/simulator.js';
import type { FaultSpec, WebhookDelivery } from '../../src/simulator/index.js';
import { parseFaults } from '../../src/simulator/index.js';
import { type Client, startClient } from './helpers.js';
import { payloadOf, Receiver, sendJson } from './webhooks.receiver.js';

let c: Client;
let rx: Receiver;
beforeAll(async () => {
  c = await startClient({ seed: 13 });
  rx = await new Receiver().start();
});
afterAll(async () => {
  await c.close();
  await rx.close();
});

interface Phase {
  sent: number[];
  got: number[];
  deliveries: WebhookDelivery[];
}

/** New contacts delivered to a fresh insert-only webhook under the given faults. */
async function phase(name: string, faults: FaultSpec): Promise<Phase> {
  const res = await sendJson(c, 'POST', '/webhooks', {
    name,
    url: rx.url(`/${name}`),
    trigger_object: 'contact',
    trigger_on_update: false,
    trigger_on_delete: false,
  });
  expect(res.status).toBe(201);
  const since = c.sim.webhooks.changes().at(-1)!.seq;
  c.sim.setFaults(faults);
  c.sim.mutate(1000, { streams: ['contacts'] });
  expect(await c.sim.webhooks.idle()).toBe(true);
  c.sim.setFaults({});
  const sent = c.sim.webhooks
    .changes(since)
    .filter((ch) => ch.object === 'contact' && ch.action === 'insert')
    .map((ch) => ch.id!);
  const got = rx.at(`/${name}`).map((r) => (payloadOf(r).contact as { id: number }).id);
  const deliveries = c.sim.webhooks.deliveries().filter((d) => d.webhookId === res.json.id);
  return { sent, got, deliveries };
}

/** Binomial count k of n at rate p within 4.5 standard deviations (a seeded run gives one fixed k). */
function nearRate(k: number, n: number, p: number): void {
  const sd = Math.sqrt(n * p * (1 - p));
  expect(Math.abs(k - n * p), `${k} of ${n} at ${p}`).toBeLessThanOrEqual(4.5 * sd + 1);
}

/** Deliveries that arrived after one made later (a larger id). */
function overtaken(got: number[]): number {
  let max = -1;
  let n = 0;
  for (const id of got) {
    if (id < max) n++;
    max = Math.max(max, id);
  }
  return n;
}

describe('delivery faults', () => {
  it('none by default: every new contact once, in order', async () => {
    const p = await phase('clean', {});
    expect(p.sent.length).toBeGreaterThan(200);
    expect(p.got).toEqual(p.sent);
  });

  it('drops silently at the drop rate', async () => {
    const p = await phase('drop', { webhookDropRate: 0.2 });
    const dropped = p.deliveries.filter((d) => d.status === 'dropped');
    expect(dropped.every((d) => d.attempts.length === 0)).toBe(true);
    expect(p.got).toEqual(p.sent.filter((id) => !dropped.some((d) => d.recordId === id)));
    expect(dropped.length).toBeGreaterThan(0);
    nearRate(dropped.length, p.sent.length, 0.2);
  });

  it('duplicates at the duplicate rate', async () => {
    const p = await phase('dup', { webhookDuplicateRate: 0.15 });
    const copies = p.deliveries.filter((d) => d.duplicateOf !== null);
    expect(p.got.length).toBe(p.sent.length + copies.length);
    const twice = p.sent.filter((id) => p.got.filter((g) => g === id).length === 2);
    expect(twice.sort((a, b) => a - b)).toEqual(copies.map((d) => d.recordId).sort((a, b) => a - b));
    expect(new Set(p.got)).toEqual(new Set(p.sent));
    nearRate(copies.length, p.sent.length, 0.15);
  });

  it('reorders at the reorder rate: a held delivery arrives behind a later one', async () => {
    const p = await phase('reorder', { webhookReorderRate: 0.2 });
    const reordered = p.deliveries.filter((d) => d.reordered);
    expect([...p.got].sort((a, b) => a - b)).toEqual(p.sent);
    expect(overtaken(p.got)).toBe(reordered.length);
    expect(reordered.length).toBeGreaterThan(0);
    nearRate(reordered.length, p.sent.length, 0.2);
  });

  it('delays at the delay rate, keeping the order', async () => {
    const p = await phase('delay', { webhookDelayRate: 0.1, webhookDelayMs: 2 });
    const delayed = p.deliveries.filter((d) => d.delayMs > 0);
    expect(p.got).toEqual(p.sent);
    expect(delayed.every((d) => d.delayMs === 2 && d.status === 'delivered')).toBe(true);
    nearRate(delayed.length, p.sent.length, 0.1);
  });

  it('are the same for the same seed', async () => {
    const runs = await Promise.all([startClient({ seed: 5 }), startClient({ seed: 5 })]);
    try {
      const patterns = [];
      for (const run of runs) {
        const made = await sendJson(run, 'POST', '/webhooks', {
          name: 'same',
          url: rx.url('/same'),
          trigger_object: 'contact',
        });
        run.sim.setFaults({ webhookDropRate: 0.3, webhookDuplicateRate: 0.3, webhookReorderRate: 0.3 });
        run.sim.mutate(60, { streams: ['contacts'] });
        expect(await run.sim.webhooks.idle()).toBe(true);
        const mine = run.sim.webhooks.deliveries().filter((d) => d.webhookId === made.json.id);
        patterns.push(mine.map((d) => [d.recordId, d.status, d.duplicateOf !== null, d.reordered]));
      }
      expect(patterns[0]!.length).toBeGreaterThan(60);
      expect(patterns[1]).toEqual(patterns[0]);
    } finally {
      await Promise.all(runs.map((r) => r.close()));
    }
  });
});

describe('webhook knobs of evsync simulator', () => {
  it('are listed by --help', () => {
    const program = new Command();
    registerSimulatorCommand(program);
    const help = program.commands.find((cmd) => cmd.name() === 'simulator')!.helpInformation();
    for (const flag of [
      '--webhook-hosts',
      '--webhook-retry-base',
      '--webhook-attempts',
      '--webhook-timeout',
      '--webhook-concurrency',
      '--webhook-queue',
    ]) {
      expect(help).toContain(flag);
    }
  });

  it('parse with rates and a delay', () => {
    expect(parseFaults('hook-drop=0.1,hook-dup=0.2,hook-reorder=0.3,hook-delay=0.4:50')).toEqual({
      webhookDropRate: 0.1,
      webhookDuplicateRate: 0.2,
      webhookReorderRate: 0.3,
      webhookDelayRate: 0.4,
      webhookDelayMs: 50,
    });
    expect(() => parseFaults('hook-drop=2')).toThrow(/between 0 and 1/);
    expect(() => parseFaults('hook-delay=0.1:soon')).toThrow(/hook-delay/);
  });
});
