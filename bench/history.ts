/**
 * The history of every record (issue 37): what keeping it costs on the live path and on disk. The same simulated
 * account (`small`, seed 5) is backfilled twice, once with the history on and once off, then changed in rounds of
 * registrant changes, each followed by an incremental sync (polls), or delivered by the simulator's webhooks to a
 * receiver that applies them (webhooks); each configuration runs in a process of its own
 * (history-child.ts), the simulator in another. Reported: versions written and bytes per 1,000 changes (the
 * warehouse file's growth over the same syncs with the history off, and the versions as zstd Parquet, what readers'
 * copies carry), and the syncs' CPU per change with the history on and off.
 *
 *   npm run bench -- --only history        (node dist/bench/history.js alone: the same, printed)
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { HistoryChildReport } from './history-child.js';
import { type BenchOptions, figure, jsonChild, round, type ScenarioResult, tempDir } from './lib.js';
import { machineInfo } from './machine.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'history-child.js');

/** One feed's figures: the same changes with the history on and off. */
async function feedFigures(
  o: BenchOptions,
  dir: string,
  feed: 'poll' | 'webhook',
  rounds: number,
  changes: number,
): Promise<ScenarioResult[]> {
  const run = (history: 'on' | 'off') => {
    o.log(`history: ${rounds} rounds of ${changes} registrant changes by ${feed}, history ${history}`);
    const args = ['--size', 'small', '--history', history, '--feed', feed, '--rounds', String(rounds)];
    return jsonChild<HistoryChildReport>([CHILD, ...args, '--changes', String(changes), '--dir', dir]);
  };
  const off = await run('off');
  const on = await run('on');
  const per = (r: HistoryChildReport) => (r.cpuMs * 1000) / Math.max(1, r.changes);
  const perThousand = (n: number) => (n * 1000) / Math.max(1, on.changes);
  const by = feed === 'poll' ? 'polls' : 'webhooks';
  const detail =
    `${on.changes} changes made (${on.written} ${feed === 'poll' ? 'rows written by the syncs' : 'deliveries applied'}); ` +
    `${on.versions} versions kept; CPU ${round(on.cpuMs)} ms on vs ${round(off.cpuMs)} ms off ` +
    `(wall ${round(on.wallMs)} vs ${round(off.wallMs)} ms); warehouse file ${on.fileBytes} vs ${off.fileBytes} bytes; ` +
    `versions as zstd Parquet ${on.historyParquetBytes} bytes`;
  return [
    figure(
      `history: versions written per 1,000 changes (${by})`,
      'versions',
      round(perThousand(on.versions), 1),
      null,
      null,
      detail,
    ),
    figure(
      `history: warehouse bytes per 1,000 changes (${by}; file on - off)`,
      'bytes',
      Math.round(perThousand(on.fileBytes - off.fileBytes)),
      null,
      null,
    ),
    figure(
      `history: versions as zstd Parquet per 1,000 changes (${by})`,
      'bytes',
      Math.round(perThousand(on.historyParquetBytes)),
      null,
      null,
    ),
    figure(`history: live CPU per change by ${by}, history on`, 'us', round(per(on), 1), null, null),
    figure(`history: live CPU per change by ${by}, history off`, 'us', round(per(off), 1), null, null),
    figure(`history: live CPU per change by ${by}, on vs off`, 'ratio', round(per(on) / per(off), 2), null, null),
  ];
}

export async function historyScenarios(o: BenchOptions): Promise<ScenarioResult[]> {
  const tmp = tempDir('evsync-bench-history-');
  try {
    return [
      ...(await feedFigures(o, tmp.path('.'), 'poll', o.quick ? 4 : 10, 1000)),
      ...(await feedFigures(o, tmp.path('.'), 'webhook', o.quick ? 2 : 5, 500)),
    ];
  } finally {
    tmp.remove();
  }
}

// Run alone: node dist/bench/history.js, which also writes bench/results/history.json (with the machine it ran on).
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const results = await historyScenarios({ quick: false, log: (m) => process.stderr.write(`[bench] ${m}\n`) });
  for (const r of results)
    process.stdout.write(`${r.name}: ${r.value} ${r.metric}${r.detail ? ` (${r.detail})` : ''}\n`);
  // dist/bench/ -> the repository root.
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  const saved = { command: 'node dist/bench/history.js', machine: machineInfo(), results };
  writeFileSync(join(root, 'bench', 'results', 'history.json'), `${JSON.stringify(saved, null, 2)}\n`);
}
