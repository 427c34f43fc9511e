import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  ForbiddenError,
  MalformedResponseError,
  NetworkError,
  NotFoundError,
  TimeoutError,
  ValidationError,
} from '../../src/api/index.js';
import type { RetryEvent } from '../../src/api/types.js';
import { closeClients, fakeService, makeClient, okPage, onePage, scriptedService, withToken } from './helpers.js';

const errorBody = (status: number, name: string, message: string) => ({
  status,
  body: { name, message, code: 0, status },
});

afterEach(closeClients);

describe('errors', () => {
  it('403 is a ForbiddenError with the resource, never retried', async () => {
    const svc = fakeService(withToken(() => errorBody(403, 'Forbidden', 'You do not have access to that resource.')));
    const client = makeClient(svc);
    const err = await client.get('/events/7').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ForbiddenError);
    const e = err as ForbiddenError;
    expect(e).toMatchObject({ status: 403, method: 'GET', path: '/events/7', apiName: 'Forbidden', code: 0 });
    expect(e.message).toContain('You do not have access to that resource.');
    expect(e.message).toContain('/events/7');
    expect(svc.dataCalls()).toHaveLength(1);
  });

  it('404 is a NotFoundError, never retried', async () => {
    const svc = fakeService(withToken(() => errorBody(404, 'Not Found', 'The requested resource does not exist.')));
    const client = makeClient(svc);
    await expect(client.get('/events/8')).rejects.toBeInstanceOf(NotFoundError);
    expect(svc.dataCalls()).toHaveLength(1);
  });

  it('400 is an ApiError, never retried', async () => {
    const svc = fakeService(withToken(() => errorBody(400, 'Bad Request', 'start_time is required')));
    const client = makeClient(svc);
    const err = await client
      .list('/registrations/audit/sessions', { params: { event_id: 1 } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    expect(svc.dataCalls()).toHaveLength(1);
  });

  it('422 with the array body carries fieldErrors', async () => {
    const svc = fakeService(
      withToken(() => ({
        status: 422,
        body: [
          { field: 'email', message: 'Email is not a valid email address.' },
          { field: 'first_name', message: 'First Name cannot be blank.' },
        ],
      })),
    );
    const client = makeClient(svc);
    const err = await client.send('POST', '/registrants/create', { email: 'x' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    const e = err as ValidationError;
    expect(e.status).toBe(422);
    expect(e.fieldErrors).toEqual([
      { field: 'email', message: 'Email is not a valid email address.' },
      { field: 'first_name', message: 'First Name cannot be blank.' },
    ]);
    expect(e.message).toContain('email: Email is not a valid email address.');
    expect(svc.dataCalls()).toHaveLength(1);
    expect(svc.dataCalls()[0]!.body).toBe('email=x');
    expect(svc.dataCalls()[0]!.headers['content-type']).toMatch(/^application\/x-www-form-urlencoded/);
  });

  it('422 with the object body form', async () => {
    const svc = fakeService(withToken(() => errorBody(422, 'Unprocessable Entity', 'Data Validation Failed.')));
    const client = makeClient(svc);
    const err = (await client
      .send('PUT', '/registrants/update/3', { a: 1 })
      .catch((e: unknown) => e)) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.apiName).toBe('Unprocessable Entity');
    expect(err.fieldErrors).toEqual([]);
  });
});

describe('retries', () => {
  it.each([500, 502, 503, 504])('%i then success is retried and charged again', async (status) => {
    const svc = fakeService(withToken((_r, n) => (n < 2 ? errorBody(status, 'x', 'y') : okPage())));
    const client = makeClient(svc);
    const retries: RetryEvent[] = [];
    client.on('retry', (e) => retries.push(e));
    const page = await client.list('/registrants');
    expect(page.items).toHaveLength(1);
    expect(svc.dataCalls()).toHaveLength(3);
    expect(retries.map((r) => r.reason)).toEqual([`status ${status}`, `status ${status}`]);
    expect(client.stats().spent.list).toBe(30); // every attempt is charged by the server
    expect(client.stats().retries).toBe(2);
  });

  it('stops after the bounded number of attempts', async () => {
    const svc = fakeService(withToken(() => errorBody(503, 'Service Unavailable', 'maintenance')));
    const client = makeClient(svc, { retry: { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 } });
    const err = await client.list('/registrants').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(503);
    expect(svc.dataCalls()).toHaveLength(3);
  });

  it('malformed JSON then success', async () => {
    const svc = fakeService(withToken((_r, n) => (n === 0 ? { body: '{"items": [{"id": 1}, ' } : okPage())));
    const client = makeClient(svc);
    const page = await client.list('/registrants');
    expect(page.items).toEqual([{ id: 1 }]);
    expect(svc.dataCalls()).toHaveLength(2);
  });

  it('an envelope failing the schema is retried, then a MalformedResponseError naming the path', async () => {
    const svc = fakeService(withToken(() => ({ body: { items: [{ id: 1 }], _meta: { totalCount: 'lots' } } })));
    const client = makeClient(svc, { retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 } });
    const err = await client.list('/sessions', { params: { event_id: 3 } }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MalformedResponseError);
    expect((err as MalformedResponseError).message).toContain('/sessions?event_id=3');
    expect((err as MalformedResponseError).detail).toMatch(/_meta/);
    expect(svc.dataCalls()).toHaveLength(2);
  });

  it('accepts a body without _meta when the X-Pagination headers carry it', async () => {
    const svc = fakeService(
      withToken(() => ({
        body: { items: [{ id: 1 }] },
        headers: {
          'x-pagination-total-count': '1',
          'x-pagination-page-count': '1',
          'x-pagination-current-page': '1',
          'x-pagination-per-page': '20',
        },
      })),
    );
    const client = makeClient(svc);
    const page = await client.list('/registrants');
    expect(page.meta).toEqual({ totalCount: 1, pageCount: 1, currentPage: 1, perPage: 20 });
  });

  it('network errors on a GET are retried', async () => {
    const { pool, service } = scriptedService();
    const data = (p: string) => p.startsWith('/api/v1/registrants');
    pool
      .intercept({ path: data })
      .replyWithError(Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }));
    pool.intercept({ path: data }).replyWithError(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    pool.intercept({ path: data }).reply(200, onePage());
    const client = makeClient(service);
    const reasons: string[] = [];
    client.on('retry', (e) => reasons.push(e.reason));
    expect((await client.list('/registrants')).items).toEqual([{ id: 1 }]);
    expect(reasons).toEqual(['network', 'network']);
    expect(client.stats().spent.list).toBe(30); // the request may have reached the server: charged
  });

  it('a POST is not retried on a 503', async () => {
    const svc = fakeService(withToken(() => errorBody(503, 'x', 'y')));
    const client = makeClient(svc);
    await expect(client.send('POST', '/registrants/checkin', { id: '1', status: 'attended' })).rejects.toBeInstanceOf(
      ApiError,
    );
    expect(svc.dataCalls()).toHaveLength(1);
  });

  it('a DELETE with no body answers status and null', async () => {
    const svc = fakeService(withToken(() => ({ status: 204, body: '' })));
    const client = makeClient(svc);
    expect(await client.send('DELETE', '/sessions/field/4')).toEqual({ status: 204, body: null });
  });

  it('timeouts: headers not in time are retried, then a TimeoutError', async () => {
    const { pool, service } = scriptedService();
    pool
      .intercept({ path: () => true })
      .reply(200, onePage())
      .delay(300)
      .times(2);
    const client = makeClient(service, {
      timeouts: { headersMs: 20 },
      retry: { attempts: 2, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const err = await client.list('/registrants').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TimeoutError);
    expect((err as TimeoutError).phase).toBe('headers');
    expect(client.stats().spent.list).toBe(20);
  });

  it('a caller abort is not retried and frees the credits', async () => {
    const { pool, service } = scriptedService();
    pool
      .intercept({ path: () => true })
      .reply(200, onePage())
      .delay(300);
    const client = makeClient(service);
    await client.ensureToken();
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stop')), 20);
    await expect(client.list('/registrants', {}, { signal: controller.signal })).rejects.toThrow('stop');
    expect(client.stats().spent.list).toBe(0);
  });

  it('a refused connection is retried even for a POST, and not charged', async () => {
    const { pool: o, service } = scriptedService();
    o.intercept({ path: '/api/v1/registrants/checkin', method: 'POST' }).replyWithError(
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    );
    o.intercept({ path: '/api/v1/registrants/checkin', method: 'POST' }).reply(200, { ok: true });
    const client = makeClient(service);
    const res = await client.send('POST', '/registrants/checkin', { id: '1', status: 'attended' });
    expect(res).toEqual({ status: 200, body: { ok: true } });
    expect(client.stats().spent.other).toBe(1);
  });

  it('a socket error on a POST is not retried', async () => {
    const { pool: o, service } = scriptedService();
    o.intercept({ path: '/api/v1/registrants/create', method: 'POST' }).replyWithError(
      Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }),
    );
    const client = makeClient(service);
    await expect(client.send('POST', '/registrants/create', { email: 'a@b.c' })).rejects.toBeInstanceOf(NetworkError);
  });
});
