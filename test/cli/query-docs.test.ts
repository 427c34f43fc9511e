/**
 * What `evsync query` refuses is said three times: by the error, in the README's "What `query` runs", and in
 * `evsync query --help`. The three say the same: the statements that run, the statements refused, the message's
 * shape, the exit code, and the row bound's remedies.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOnlyReason, statementRefusal } from '../../src/warehouse/db/statement-check.js';
import { Warehouse } from '../../src/warehouse/index.js';
import { eventScope, page, registrants } from '../warehouse/helpers.js';
import { run, tempDir } from './helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Text with Markdown's code marks and line breaks gone, as a reader reads it. */
function plain(text: string): string {
  return text.replace(/`/g, '').replace(/\s+/g, ' ');
}

const section = plain(README.slice(README.indexOf('### What `query` runs'), README.indexOf('### Configuration')));
/** The statements that run, as the error lists them. */
const READING = /\(([^)]*), EXPLAIN\)/.exec(readOnlyReason({ explain: true }))?.[1] ?? '';
const REFUSED = ['COPY', 'EXPORT', 'IMPORT', 'ATTACH', 'DETACH', 'INSTALL', 'LOAD', 'SET', 'RESET', 'USE', 'PRAGMA'];

let dir: string;
let cleanup: () => void;
let env: Record<string, string>;
let help: string;

beforeAll(async () => {
  ({ dir, cleanup } = tempDir('evsync-query-docs-'));
  env = { EVSYNC_DB: join(dir, 'w.duckdb') };
  const w = await Warehouse.open(env.EVSYNC_DB!);
  await page(w, registrants, eventScope(1), [{ id: 1 }, { id: 2 }, { id: 3 }]);
  await w.close();
  help = plain((await run(['query', '--help'])).stdout);
});
afterAll(() => cleanup());

describe("query's refusals, the README and --help say the same", () => {
  it('the statements that run, in the order the error lists them', () => {
    expect(READING).toBe('SELECT, WITH, FROM, VALUES, TABLE, DESCRIBE, SHOW, SUMMARIZE, PIVOT, UNPIVOT');
    expect(section).toContain(
      `only reading statements run: ${READING}, and EXPLAIN of one of those unless --allow-read`,
    );
    expect(help).toContain(
      `only reading statements run: ${READING}, and EXPLAIN of one of those (only without --allow-read)`,
    );
  });

  it('the statements refused, each refused as the docs say, with the exit code they give', async () => {
    for (const word of [...REFUSED, 'CALL', 'CREATE', 'INSERT', 'UPDATE', 'DELETE']) {
      expect(section, word).toContain(word);
      expect(help, word).toContain(word);
    }
    expect(section).toContain('(exit 1)');
    expect(help).toContain('(exit 1)');
    const r = await run(['query', "select 1; copy registrants to 'x.csv'"], { cwd: dir, env });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`error: ${statementRefusal("select 1; copy registrants to 'x.csv'", { explain: true })}\n`);
  });

  it("the message's shape, as the README and --help quote it", async () => {
    const r = await run(['query', "select 1; copy registrants to 'x.csv'"], { cwd: dir, env });
    const message = r.stderr.replace(/^error: /, '').trim();
    const quoted = message.replace(READING, 'SELECT, WITH, ...').replace(', EXPLAIN)', ')');
    expect(section).toContain(quoted);
    expect(help).toContain(message.replace(/\(SELECT[^)]*\)/, '(...)'));
  });

  it('the row bound: the remedies the README and --help quote are the error', async () => {
    const r = await run(['query', 'select id from registrants', '--max-rows', '2'], { cwd: dir, env });
    expect(r.code).toBe(1);
    const remedies = plain(r.stderr.slice(r.stderr.indexOf('add a LIMIT')).trim());
    expect(r.stderr).toContain('the result has more than 2 rows: add a LIMIT');
    expect(section).toContain(`the result has more than 50,000 rows: ${remedies}`);
    expect(help).toContain(remedies);
  });
});
