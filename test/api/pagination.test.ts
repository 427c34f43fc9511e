import { afterEach, describe, expect, it } from 'vitest';
import { listQueryPairs, toQueryString } from '../../src/api/query.js';
import { closeClients, envelope, type FakeRequest, fakeService, makeClient, queryOf, withToken } from './helpers.js';

/** A fake list endpoint over rows with ids 1..n honouring sort=id, search id>N, page, per-page (capped at `cap`). */
function rowsEndpoint(n: number, cap: number, links: 'relative' | 'absolute' = 'relative', idAsString = false) {
  return (req: FakeRequest) => {
    const q = queryOf(req);
    const perPage = Math.min(Number(q.get('per-page') ?? 20), cap);
    const page = Number(q.get('page') ?? 1);
    const after = /(?:^|&)id>(\d+)/.exec(q.get('search') ?? '')?.[1];
    const matching = Array.from({ length: n }, (_, i) => i + 1).filter(
      (id) => after === undefined || id > Number(after),
    );
    const items = matching
      .slice((page - 1) * perPage, page * perPage)
      .map((id) => ({ id: idAsString ? String(id) : id, name: `r${id}` }));
    return {
      body: envelope(
        items,
        { totalCount: matching.length, pageCount: Math.ceil(matching.length / perPage), currentPage: page, perPage },
        links,
      ),
    };
  };
}

afterEach(closeClients);

async function collect<T>(gen: AsyncGenerator<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of gen) out.push(x);
  return out;
}

describe('keyset', () => {
  it('an exact multiple of the page size costs no extra empty call', async () => {
    const svc = fakeService(withToken(rowsEndpoint(3000, 1000)));
    const client = makeClient(svc);
    const pages = await collect(
      client.keyset<{ id: number }>('/registrants', { perPage: 1000, params: { event_id: 9 } }),
    );
    expect(pages.map((p) => [p.items.length, p.lastId, p.done])).toEqual([
      [1000, 1000, false],
      [1000, 2000, false],
      [1000, 3000, true],
    ]);
    expect(svc.dataCalls()).toHaveLength(3);
    expect(client.stats().spent.list).toBe(30);
  });

  it('sends sort=id, page=1, per-page and the id condition joined with & inside search (%26)', async () => {
    const svc = fakeService(withToken(rowsEndpoint(5, 1000)));
    const client = makeClient(svc);
    await collect(
      client.keyset('/registrants', {
        perPage: 2,
        afterId: 1,
        params: { event_id: 12 },
        search: ['updated_at>=2024-01-01 00:00:00', 'updated_at<2024-02-01 00:00:00'],
        fields: ['id', 'updated_at'],
      }),
    );
    const first = svc.dataCalls()[0]!;
    expect(first.path).toBe(
      '/registrants?event_id=12&fields=id,updated_at&search=updated_at%3E%3D2024-01-01%2000%3A00%3A00%26updated_at%3C2024-02-01%2000%3A00%3A00%26id%3E1&sort=id&page=1&per-page=2',
    );
    const q = queryOf(svc.dataCalls()[1]!);
    expect(q.get('search')).toBe('updated_at>=2024-01-01 00:00:00&updated_at<2024-02-01 00:00:00&id>3');
    expect(q.get('page')).toBe('1');
    expect(q.get('sort')).toBe('id');
    expect(q.getAll('search')).toHaveLength(1);
  });

  it('omits the id condition without afterId', async () => {
    const svc = fakeService(withToken(rowsEndpoint(3, 1000)));
    const client = makeClient(svc);
    await collect(client.keyset('/registrants', { perPage: 10 }));
    expect(queryOf(svc.dataCalls()[0]!).get('search')).toBeNull();
  });

  it('trusts the answer when the server caps the page at 200 although 1000 was asked', async () => {
    const svc = fakeService(withToken(rowsEndpoint(450, 200)));
    const client = makeClient(svc);
    const pages = await collect(client.keyset<{ id: number }>('/contacts', { perPage: 1000 }));
    expect(pages.map((p) => [p.items.length, p.meta.perPage, p.done])).toEqual([
      [200, 200, false],
      [200, 200, false],
      [50, 200, true],
    ]);
    expect(svc.dataCalls()).toHaveLength(3);
  });

  it('ends on an empty scope with one call', async () => {
    const svc = fakeService(withToken(rowsEndpoint(0, 1000)));
    const client = makeClient(svc);
    const pages = await collect(client.keyset('/registrants', { perPage: 1000, afterId: 77 }));
    expect(pages).toHaveLength(1);
    expect(pages[0]).toMatchObject({ items: [], lastId: 77, done: true });
  });

  it('accepts ids as numeric strings and never follows _links (absolute or relative)', async () => {
    for (const links of ['relative', 'absolute'] as const) {
      const svc = fakeService(withToken(rowsEndpoint(5, 2, links, true)));
      const client = makeClient(svc);
      const pages = await collect(client.keyset<{ id: string }>('/registrants', { perPage: 2 }));
      expect(pages.map((p) => p.lastId)).toEqual([2, 4, 5]);
      expect(svc.dataCalls().every((c) => c.path.startsWith('/registrants?') && c.path.includes('page=1&'))).toBe(true);
      await client.close();
    }
  });

  it('ids going down inside a page are a loud error; an id not above the bound is set aside', async () => {
    const svc = fakeService(
      withToken(() => ({
        body: envelope([{ id: 5 }, { id: 3 }], { totalCount: 2, pageCount: 1, perPage: 10 }),
      })),
    );
    let client = makeClient(svc);
    // sort=id ignored: going on could skip rows silently.
    await expect(collect(client.keyset('/registrants', { perPage: 10 }))).rejects.toThrow(/keyset order/);
    const svc2 = fakeService(
      withToken(() => ({ body: envelope([{ id: 5 }, { id: 7 }], { totalCount: 2, pageCount: 1, perPage: 10 }) })),
    );
    await client.close();
    client = makeClient(svc2);
    // Asked for id>5, got 5 again: that record is quarantined, 7 goes on.
    const pages = await collect(client.keyset('/registrants', { perPage: 10, afterId: 5 }));
    expect(pages[0]!.items.map((i) => i.id)).toEqual([7]);
    expect(pages[0]!.quarantined).toEqual([{ raw: { id: 5 }, reason: expect.stringMatching(/not above id>5/) }]);
  });

  it('a record without an integer id, or repeated, is quarantined and the walk goes on after the largest valid id', async () => {
    const svc = fakeService(
      withToken((req) => {
        const after = /id%3E(\d+)/.exec(req.path)?.[1];
        return after
          ? { body: envelope([{ id: 9 }], { totalCount: 1, pageCount: 1, perPage: 3 }) }
          : {
              body: envelope([{ id: 'abc' }, { id: 4 }, { id: 4 }, { id: 6 }], {
                totalCount: 5,
                pageCount: 2,
                perPage: 4,
              }),
            };
      }),
    );
    const client = makeClient(svc);
    const pages = await collect(client.keyset('/registrants', { perPage: 4 }));
    expect(pages.map((p) => p.items.map((i) => i.id))).toEqual([[4, 6], [9]]);
    expect(pages[0]!.quarantined.map((q) => q.reason)).toEqual([
      expect.stringMatching(/no integer id \("abc"\)/),
      expect.stringMatching(/id 4 repeated/),
    ]);
    // The second call asked for what follows the largest valid id.
    expect(svc.dataCalls()[1]!.path).toMatch(/id%3E6/);
  });

  it('a page none of whose items can be keyed ends the walk after one call (no loop, the page is not bought again)', async () => {
    const svc = fakeService(
      withToken(() => ({ body: envelope([{ id: 'x' }, { id: null }], { totalCount: 50, pageCount: 25, perPage: 2 }) })),
    );
    const client = makeClient(svc);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const p of client.keyset('/registrants', { perPage: 2 })) seen.push(p.quarantined.length);
      })(),
    ).rejects.toThrow(/none of the 2 items has a usable id/);
    expect(seen).toEqual([2]);
    expect(svc.dataCalls()).toHaveLength(1);
  });

  it('early return stops without another call', async () => {
    const svc = fakeService(withToken(rowsEndpoint(100, 1000)));
    const client = makeClient(svc);
    for await (const p of client.keyset('/registrants', { perPage: 10 })) {
      expect(p.items).toHaveLength(10);
      break;
    }
    expect(svc.dataCalls()).toHaveLength(1);
  });
});

describe('offset pages', () => {
  it('follows _meta.pageCount and the granted perPage', async () => {
    const svc = fakeService(withToken(rowsEndpoint(450, 200)));
    const client = makeClient(svc);
    const pages = await collect(client.pages('/contacts', { perPage: 1000, sort: 'id' }));
    expect(pages.map((p) => p.items.length)).toEqual([200, 200, 50]);
    expect(svc.dataCalls().map((c) => [queryOf(c).get('page'), queryOf(c).get('per-page')])).toEqual([
      ['1', '1000'],
      ['2', '200'],
      ['3', '200'],
    ]);
  });

  it('an exact multiple costs no extra call', async () => {
    const svc = fakeService(withToken(rowsEndpoint(40, 1000)));
    const client = makeClient(svc);
    const pages = await collect(client.pages('/registrants', { perPage: 20 }));
    expect(pages.map((p) => [p.page, p.done])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(svc.dataCalls()).toHaveLength(2);
  });

  it('starts at the page asked for (a resumed walk) and says which page each answer is', async () => {
    const svc = fakeService(withToken(rowsEndpoint(50, 1000)));
    const client = makeClient(svc);
    const pages = await collect(client.pages('/registrants', { perPage: 10, page: 4 }));
    expect(pages.map((p) => [p.page, p.items[0]?.id, p.done])).toEqual([
      [4, 31, false],
      [5, 41, true],
    ]);
    expect(svc.dataCalls()).toHaveLength(2);
  });

  it('refuses an answer that ignores page: the repeated page is bought once, never again', async () => {
    // Whatever page is asked, the first one, with a page count no scope has.
    const svc = fakeService(
      withToken(() => ({ body: envelope([{ id: 1 }, { id: 2 }], { totalCount: 2e9, pageCount: 1e9, perPage: 2 }) })),
    );
    const client = makeClient(svc);
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const p of client.pages('/registrants', { perPage: 2 })) seen.push(p.page);
      })(),
    ).rejects.toThrow(/GET \/registrants\?.*malformed answer: page 2 holds the same records as page 1/);
    expect(seen).toEqual([1]);
    expect(svc.dataCalls()).toHaveLength(2);
  });

  it("refuses to page past what the first answer's totalCount allows, after one extra call", async () => {
    // New records on every page, but the first answer said there are 2 (at 1 per page) and the count keeps growing.
    const svc = fakeService(
      withToken((req) => {
        const page = Number(queryOf(req).get('page'));
        return {
          body: envelope([{ id: page }], { totalCount: 2 * page, pageCount: 1e9, currentPage: page, perPage: 1 }),
        };
      }),
    );
    const client = makeClient(svc);
    await expect(collect(client.pages('/registrants', { perPage: 1 }))).rejects.toThrow(
      /keeps answering \(page 4\) past what its first answer's totalCount/,
    );
    // Pages 1 and 2 as counted, page 3 for rows added meanwhile, page 4 refused.
    expect(svc.dataCalls()).toHaveLength(4);
  });

  it('an answer without _meta.totalCount pages by pageCount, bounded by the first answer’s', async () => {
    const dropTotal = (body: Record<string, unknown>) => {
      const { totalCount: _, ...meta } = body._meta as Record<string, number>;
      return { body: { ...body, _meta: meta } };
    };
    const client = makeClient(fakeService(withToken((req) => dropTotal(rowsEndpoint(25, 1000)(req).body))));
    const pages = await collect(client.pages('/registrants', { perPage: 10 }));
    expect(pages.map((p) => [p.page, p.meta.totalCount, p.done])).toEqual([
      [1, null, false],
      [2, null, false],
      [3, null, true],
    ]);
    // Without a total, the first answer's page count (plus one for rows added meanwhile) bounds the walk.
    const growing = fakeService(
      withToken((req) => {
        const page = Number(queryOf(req).get('page'));
        const pageCount = page === 1 ? 2 : 1e9;
        return dropTotal(envelope([{ id: page }], { totalCount: 0, pageCount, currentPage: page, perPage: 1 }));
      }),
    );
    await expect(collect(makeClient(growing).pages('/registrants', { perPage: 1 }))).rejects.toThrow(
      /keeps answering \(page 4\) past what its first answer's pageCount 2 allows/,
    );
    expect(growing.dataCalls()).toHaveLength(4);
  });
});

describe('query string', () => {
  it('encodes & = > and spaces inside values, keeps commas, uses per-page', () => {
    expect(
      toQueryString(
        listQueryPairs({
          search: ['status=*in*confirmed|attended', "last_name=*beginswith*O'Br"],
          searchCondition: 'or',
          expand: ['homeAddress', 'workAddress'],
          ids: [1, 2, 3],
          perPage: 200,
        }),
      ),
    ).toBe(
      "expand=homeAddress,workAddress&ids=1,2,3&search=status%3D*in*confirmed%7Cattended%26last_name%3D*beginswith*O'Br&searchCondition=or&per-page=200",
    );
  });

  it('refuses more than 100 ids, non-positive ids and a condition containing &', () => {
    expect(() => listQueryPairs({ ids: Array.from({ length: 101 }, (_, i) => i + 1) })).toThrow(/at most 100/);
    expect(() => listQueryPairs({ ids: [0] })).toThrow(/positive/);
    expect(() => listQueryPairs({ search: ['a=1&b=2'] })).toThrow(/one condition/);
  });
});
