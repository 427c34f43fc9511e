import { describe, expect, it } from 'vitest';
import { ApiClient, credentialsFromEnv, encodeCredentials, urlencodeRfc1738 } from '../../src/api/index.js';

describe('credentials', () => {
  it('urlencodes like PHP urlencode (RFC 1738)', () => {
    expect(urlencodeRfc1738("a b+c/d~e!f'g(h)i*j-k_l.m")).toBe('a+b%2Bc%2Fd%7Ee%21f%27g%28h%29i%2Aj-k_l.m');
    expect(urlencodeRfc1738('é')).toBe('%C3%A9');
  });

  it('encodes key:secret in base64 after urlencoding each', () => {
    const encoded = encodeCredentials({ clientId: 'my key', clientSecret: 'p@ss:word' });
    expect(Buffer.from(encoded, 'base64').toString()).toBe('my+key:p%40ss%3Aword');
  });

  it('passes the pre-encoded string through, with or without the scheme', () => {
    expect(encodeCredentials({ encoded: ' Basic QUJDOkRFRg== ' })).toBe('QUJDOkRFRg==');
    expect(encodeCredentials({ encoded: 'QUJDOkRFRg==' })).toBe('QUJDOkRFRg==');
    expect(() => encodeCredentials({ encoded: 'not base64!' })).toThrow(/base64/);
    expect(() => encodeCredentials({ clientId: 'a', clientSecret: '' })).toThrow(/required/);
  });

  it('reads the environment, the pre-encoded string first', () => {
    expect(credentialsFromEnv({ EVSYNC_CLIENT_ID: 'a', EVSYNC_CLIENT_SECRET: 'b' })).toEqual({
      clientId: 'a',
      clientSecret: 'b',
    });
    expect(
      credentialsFromEnv({ EVSYNC_CREDENTIALS: 'QUJD', EVSYNC_CLIENT_ID: 'a', EVSYNC_CLIENT_SECRET: 'b' }),
    ).toEqual({
      encoded: 'QUJD',
    });
    expect(credentialsFromEnv({})).toBeNull();
  });
});

describe('client options', () => {
  it('requires a base URL ending in /v1', () => {
    const credentials = { clientId: 'a', clientSecret: 'b' };
    expect(() => new ApiClient({ baseUrl: 'https://api.swoogo.com/api', credentials })).toThrow(/must end in \/v1/);
    expect(() => new ApiClient({ baseUrl: 'not a url', credentials })).toThrow(/not a URL/);
    expect(() => new ApiClient({ baseUrl: 'https://u:p@x/v1', credentials })).toThrow(/credentials/);
    const c = new ApiClient({ baseUrl: 'https://api.swoogo.com/api/v1/', credentials });
    expect(c.baseUrl).toBe('https://api.swoogo.com/api/v1');
    return c.close();
  });
});
