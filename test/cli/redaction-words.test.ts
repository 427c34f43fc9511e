/**
 * Redaction replaces secret values, never the words of evsync's own messages: a webhook secret evsync refuses is
 * never used (so never printed) and is not taken for a secret to scrub, while a valid one is scrubbed wherever it
 * would appear, even echoed back in a usage error.
 */
import { describe, expect, it } from 'vitest';
import { inTempDir, run } from './helpers.js';

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
});
