/**
 * Live progress of a sync on a terminal (stderr): pages and rows per stream, credits used and left in the window,
 * and a countdown while the client waits for the window to reset. Redrawn in place at most ~8 times a second;
 * never used when stderr is not a terminal, with --json or with --quiet (see Ctx.showProgress).
 */
import type { ProgressEvent } from '../../sync/index.js';
import { formatDuration, formatNumber } from './format.js';
import type { OutStream } from './io.js';
import { type Style, stripAnsi } from './style.js';

/** What the display needs of the ledger (the client's `ledger.snapshot()`). */
interface CreditsView {
  limit: number;
  remaining: number;
  resetAt: Date | null;
  spent: { list: number; other: number; token: number };
  runBudgetLeft: number | null;
}

interface StreamLine {
  pages: number;
  rows: number;
  itemsDone: number;
  itemsFailed: number;
  active: number;
}

const REDRAW_MS = 125;

export class SyncProgress {
  private readonly streams = new Map<string, StreamLine>();
  /** Latest cumulative figures per work item (page events carry running totals for their item). */
  private readonly items = new Map<string, { pages: number; rows: number }>();
  private waitingUntil: number | null = null;
  private waitReason = '';
  private events: number | null = null;
  private drawnLines = 0;
  private dirty = true;
  private readonly timer: NodeJS.Timeout;
  private stopped = false;

  constructor(
    private readonly stream: OutStream,
    private readonly style: Style,
    private readonly credits: () => CreditsView | null,
    private readonly now: () => number = Date.now,
  ) {
    this.timer = setInterval(() => this.tick(), REDRAW_MS);
    this.timer.unref();
  }

  /** A stream for log lines while the display is up: the block is cleared, the line written, the block redrawn. */
  get logStream(): OutStream {
    return {
      isTTY: this.stream.isTTY,
      write: (chunk: string) => {
        this.clear();
        this.stream.write(chunk);
        this.dirty = true;
        return true;
      },
    };
  }

  private line(name: string): StreamLine {
    let l = this.streams.get(name);
    if (!l) {
      l = { pages: 0, rows: 0, itemsDone: 0, itemsFailed: 0, active: 0 };
      this.streams.set(name, l);
    }
    return l;
  }

  onEvent(event: ProgressEvent): void {
    switch (event.type) {
      case 'plan':
        this.events = event.events;
        for (const stream of event.streams) this.line(stream);
        break;
      case 'item-start':
        this.line(event.stream).active += 1;
        break;
      case 'page': {
        const key = `${event.stream}\u0000${event.scope}`;
        const prev = this.items.get(key) ?? { pages: 0, rows: 0 };
        const line = this.line(event.stream);
        // Guard against an emitter sending per-page rather than running counts: never go backwards.
        const pages = Math.max(event.pages, prev.pages);
        const rows = Math.max(event.rows, prev.rows);
        line.pages += pages - prev.pages;
        line.rows += rows - prev.rows;
        this.items.set(key, { pages, rows });
        // A page arriving means the wait is over.
        this.waitingUntil = null;
        break;
      }
      case 'item-done': {
        const line = this.line(event.stream);
        line.active = Math.max(0, line.active - 1);
        line.itemsDone += 1;
        break;
      }
      case 'item-failed': {
        const line = this.line(event.stream);
        line.active = Math.max(0, line.active - 1);
        line.itemsFailed += 1;
        break;
      }
    }
    this.dirty = true;
  }

  onWait(w: { ms: number; until: Date; reason: string }): void {
    this.waitingUntil = w.until.getTime();
    this.waitReason = w.reason === '429' ? 'the service answered 429' : 'credits used up for this window';
    this.dirty = true;
  }

  private tick(): void {
    // The countdown changes every second even when no event arrives.
    if (this.dirty || this.waitingUntil !== null) this.render();
  }

  private clear(): void {
    if (this.drawnLines === 0) return;
    // Up to the first line of the block, then erase to the end of the screen.
    this.stream.write(`\r\u001b[${this.drawnLines}A\u001b[0J`);
    this.drawnLines = 0;
  }

  private frame(): string[] {
    const style = this.style;
    // Some terminals (and pseudo-terminals) report 0 columns: assume a wide one rather than cutting everything.
    const columns = this.stream.columns;
    const width = columns !== undefined && columns >= 40 ? columns - 1 : 120;
    const lines: string[] = [];
    const names = [...this.streams.keys()];
    const nameWidth = Math.min(28, Math.max(8, ...names.map((name) => name.length)));
    for (const [name, line] of this.streams) {
      if (line.pages === 0 && line.active === 0 && line.itemsDone === 0 && line.itemsFailed === 0) continue;
      const state = line.active > 0 ? style.cyan('…') : line.itemsFailed > 0 ? style.red('✗') : style.green('✓');
      const failed = line.itemsFailed > 0 ? style.red(`  ${line.itemsFailed} failed`) : '';
      lines.push(
        `${state} ${name.padEnd(nameWidth)} ${formatNumber(line.pages).padStart(6)} pages ${formatNumber(line.rows).padStart(10)} rows${failed}`,
      );
    }
    const credits = this.credits();
    if (credits) {
      const used = credits.spent.list + credits.spent.other + credits.spent.token;
      const reset = credits.resetAt
        ? `, window resets in ${formatDuration(credits.resetAt.getTime() - this.now())}`
        : '';
      const budget = credits.runBudgetLeft !== null ? `, run budget left ${formatNumber(credits.runBudgetLeft)}` : '';
      lines.push(
        style.dim(
          `credits: ${formatNumber(used)} used, ${formatNumber(credits.remaining)} of ${formatNumber(credits.limit)} left${reset}${budget}`,
        ),
      );
    }
    if (this.events !== null && lines.length <= 1) lines.unshift(style.dim(`planning: ${this.events} events in scope`));
    if (this.waitingUntil !== null) {
      const left = this.waitingUntil - this.now();
      if (left > 0)
        lines.push(style.yellow(`waiting ${formatDuration(left)} for the rate-limit window (${this.waitReason})`));
    }
    // A line wider than the terminal wraps and breaks the cursor arithmetic: cut it.
    return lines.map((line) => {
      const plain = stripAnsi(line);
      return plain.length > width ? `${plain.slice(0, width - 1)}…` : line;
    });
  }

  private render(): void {
    if (this.stopped) return;
    const lines = this.frame();
    this.clear();
    if (lines.length > 0) this.stream.write(`${lines.join('\n')}\n`);
    this.drawnLines = lines.length;
    this.dirty = false;
  }

  /** Removes the block; the final summary goes to stdout after this. */
  stop(): void {
    if (this.stopped) return;
    clearInterval(this.timer);
    // The last events are drawn once before the block goes: what a run did never depends on the timer having
    // ticked after it (a fast run on a busy machine ended before its streams were drawn).
    if (this.dirty) this.render();
    this.clear();
    this.stopped = true;
  }
}
