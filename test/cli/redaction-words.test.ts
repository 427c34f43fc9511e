/**
 * Redaction replaces secret values, never the words of evsync's own messages: a secret evsync refuses as too short
 * (the webhook secret, the admin token) is never used (so never printed) and is not taken for a secret to scrub;
 * evsync's refusals are its own words, printed whole even when an accepted secret equals some of them; and an
 * accepted secret is still scrubbed wherever it would appear as a value, even echoed back in a usage error.
 */
import { describe, expect, it } from 'vitest';
import { BufferStream, ScrubbedStream } from '../../src/cli/output/io.js';
import { OwnWords, ownWords } from '../../src/cli/output/own-words.js';
import { inTempDir, run } from './helpers.js';

const BASE_ENV = {
  EVSYNC_BASE_URL: 'http://127.0.0.1:9/v1',
  EVSYNC_CLIENT_ID: 'id',
  EVSYNC_CLIENT_SECRET: 'a-client-secret',
  EVSYNC_WEBHOOK_SECRET: 'valid-webhook-secret-0123456789',
};

/** `serve` with `env` over BASE_ENV, in a folder of its own: nothing is ever called (port 9 stands for a service). */
function serve(argv: string[], env: Record<string, string>) {
  return inTempDir((dir) =>
    run(['serve', '--listen', '127.0.0.1:0', ...argv], { cwd: dir, env: { ...BASE_ENV, ...env } }),
  );
}

describe("redaction and evsync's own words", () => {
  it('EVSYNC_WEBHOOK_SECRET=short: "is too short (at least 16 characters)", unmangled, exit 2', async () => {
    await inTempDir(async (dir) => {
      const r = await run(['serve', '--listen', '127.0.0.1:0'], {
        cwd: dir,
        env: {
          EVSYNC_BASE_URL: 'http://127.0.0.1:9/v1',
          EVSYNC_CLIENT_ID: 'id',
          EVSYNC_CLIENT_SECRET: 'a-client-secret',
          EVSYNC_WEBHOOK_SECRET: 'short',
        },
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('error: EVSYNC_WEBHOOK_SECRET is too short (at least 16 characters)');
      expect(r.stderr).not.toContain('[REDACTED]');
    });
  });

  it('a valid webhook secret is still scrubbed where it would appear (exit 2, the value never shown)', async () => {
    await inTempDir(async (dir) => {
      const secret = 'valid-webhook-secret-0123456789';
      const r = await run(['serve', '--listen', secret], {
        cwd: dir,
        env: {
          EVSYNC_BASE_URL: 'http://127.0.0.1:9/v1',
          EVSYNC_CLIENT_ID: 'id',
          EVSYNC_CLIENT_SECRET: 'a-client-secret',
          EVSYNC_WEBHOOK_SECRET: secret,
        },
      });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('error: --listen [REDACTED]: expected host:port');
      expect(r.stderr).not.toContain(secret);
    });
  });

  it('EVSYNC_ADMIN_TOKEN=short: "is too short (at least 16 characters)", unmangled, exit 2, off loopback and on it', async () => {
    for (const admin of ['0.0.0.0:0', '127.0.0.1:0']) {
      const r = await serve(['--admin-listen', admin], { EVSYNC_ADMIN_TOKEN: 'short' });
      expect(r.code, admin).toBe(2);
      expect(r.stderr).toBe('error: EVSYNC_ADMIN_TOKEN is too short (at least 16 characters)\n');
    }
  });

  it("evsync's own words stay whole when an accepted secret equals some of them; the secret is scrubbed elsewhere", async () => {
    // An accepted admin token that is a piece of the webhook secret's refusal: the refusal is printed whole...
    const token = 'EVSYNC_WEBHOOK_SECRET is too short';
    const refused = await serve([], { EVSYNC_ADMIN_TOKEN: token, EVSYNC_WEBHOOK_SECRET: 'short' });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toBe('error: EVSYNC_WEBHOOK_SECRET is too short (at least 16 characters)\n');
    // ...and the same token given as a value is scrubbed.
    const echoed = await serve(['--listen', token], { EVSYNC_ADMIN_TOKEN: token });
    expect(echoed.code).toBe(2);
    expect(echoed.stderr).toContain('error: --listen [REDACTED]: expected host:port');
    expect(echoed.stderr).not.toContain(token);

    // A client secret (no length rule) that is a word of the refusal, and one that is the label of every error.
    for (const secret of ['characters', 'error']) {
      const r = await serve(['--admin-listen', '0.0.0.0:0'], {
        EVSYNC_CLIENT_SECRET: secret,
        EVSYNC_ADMIN_TOKEN: 'tiny',
      });
      expect(r.code, secret).toBe(2);
      expect(r.stderr).toBe('error: EVSYNC_ADMIN_TOKEN is too short (at least 16 characters)\n');
      const asValue = await serve(['--listen', `${secret}:80x`], { EVSYNC_CLIENT_SECRET: secret });
      expect(asValue.stderr).toContain('error: --listen [REDACTED]:80x: expected host:port');
    }
  });
});

describe('the scrubbing stream and own words', () => {
  it('keeps a secret only where it lies wholly inside own words; straddling or outside, it is scrubbed', () => {
    const out = new BufferStream();
    const stream = new ScrubbedStream(out);
    stream.addSecrets(['too short', 'short (at']);
    stream.writeParts([ownWords`EVSYNC_ADMIN_TOKEN is too short`, ' (at least 16 characters) too short\n']);
    // "too short" inside the own words stays; "short (at" runs out of them, and the last "too short" is outside.
    expect(out.text).toBe('EVSYNC_ADMIN_TOKEN is too [REDACTED] least 16 characters) [REDACTED]\n');
    out.text = '';
    stream.write('is too short\n');
    expect(out.text).toBe('is [REDACTED]\n');
  });

  it('own words are made only by the template tag, of numbers, setting names and own words', () => {
    const name = 'EVSYNC_WEBHOOK_SECRET' as const;
    const words = ownWords`${name} needs ${16} (${ownWords`nested`})`;
    expect(words).toBeInstanceOf(OwnWords);
    expect(words.text).toBe('EVSYNC_WEBHOOK_SECRET needs 16 (nested)');
    const forged = Object.assign(['a secret'], { raw: ['a secret'] }) as unknown as TemplateStringsArray;
    expect(() => ownWords(forged)).toThrow(/template tag/);
  });
});
