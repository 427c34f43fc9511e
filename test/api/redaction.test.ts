import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiClient, encodeCredentials, redact } from '../../src/api/index.js';
import { BASE_URL, type FakeReply, fakeService, tokenReply } from './helpers.js';

const CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!@#$%^*()-_+=~./:;?[]{}|'.split('');
const secretArb = fc.string({ unit: fc.constantFrom(...CHARS), minLength: 8, maxLength: 40 });
const tokenArb = fc.string({ unit: fc.constantFrom(...CHARS.slice(0, 62)), minLength: 16, maxLength: 48 });
const scenarioArb = fc.constantFrom('400', '401x2', '403', '404', '422', '500', 'malformed', 'token-401', 'token-403');

describe('redact', () => {
  it('removes credential-shaped text it never saw', () => {
    expect(redact('Authorization: Bearer abc.DEF-123')).toBe('Authorization: Bearer [REDACTED]');
    expect(redact('authorization=Basic QUJDOkRFRg==')).not.toContain('QUJDOkRFRg');
    expect(redact('{"access_token":"xyz123","type":"bearer"}')).not.toContain('xyz123');
    expect(redact('client_secret=hunter22&x=1')).not.toContain('hunter22');
  });
});

describe('secrets never leave through errors or events (property)', () => {
  it('holds for any secret, token and failure', async () => {
    await fc.assert(
      fc.asyncProperty(secretArb, tokenArb, scenarioArb, async (secret, token, scenario) => {
        const basic = encodeCredentials({ clientId: 'id', clientSecret: secret });
        // A hostile server echoes everything it got into its error bodies.
        const echo = (req: { headers: Record<string, string>; body: string }, status: number): FakeReply => ({
          status,
          body: {
            name: `Echo ${req.headers.authorization}`,
            message: `you sent ${req.headers.authorization} secret=${secret} token ${token} body ${req.body}`,
            code: 0,
            status,
          },
          headers: { 'x-debug': `${req.headers.authorization}` },
        });
        let dataCalls = 0;
        const svc = fakeService((req) => {
          if (req.path === '/oauth2/token') {
            if (scenario === 'token-401') return echo(req, 401);
            if (scenario === 'token-403') return echo(req, 403);
            return tokenReply({ token });
          }
          dataCalls += 1;
          switch (scenario) {
            case '401x2':
              return echo(req, 401);
            case 'malformed':
              return { body: `{"items": "${secret} ${token} ${req.headers.authorization}"` };
            default:
              return echo(req, Number(scenario));
          }
        });
        const client = new ApiClient({
          baseUrl: BASE_URL,
          credentials: { clientId: 'id', clientSecret: secret },
          dispatcher: svc.agent,
          retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
        });
        const events: unknown[] = [];
        for (const name of ['wait', 'request', 'retry', 'token'] as const) {
          client.on(name, (e: unknown) => events.push({ name, e }));
        }
        const err = (await client
          .list('/registrants', { params: { event_id: 1 } })
          .then(() => null)
          .catch((e: unknown) => e)) as Error | null;
        await client.close();
        expect(err).toBeInstanceOf(Error);
        // The token scenarios fail before any data call; every other one reached the hostile service.
        expect(dataCalls > 0).toBe(!scenario.startsWith('token-'));
        const cause = (err as { cause?: Error }).cause;
        const texts = [
          String(err),
          JSON.stringify(err),
          err?.stack ?? '',
          err?.message ?? '',
          JSON.stringify(Object.entries(err as object)),
          String(cause ?? ''),
          cause?.stack ?? '',
          JSON.stringify(events),
        ];
        for (const text of texts) {
          // In the token-* scenarios no token was ever issued: the echoed string is nothing the client holds.
          const held = scenario.startsWith('token-') ? [secret, basic] : [secret, token, basic, `Bearer ${token}`];
          for (const s of held) {
            expect(text.includes(s), `${s} leaked in ${text}`).toBe(false);
          }
        }
      }),
      { numRuns: 120 },
    );
  });
});
