/**
 * The archive's page format (src/sync/archived-page.ts): a list answer kept as the service sent it comes back as the
 * same records and the same quarantined items, at the positions and for the reasons the walk gave; a page of records
 * comes back as it was; one nested too deep for JSON.stringify comes back quarantined; scrubbing applies to both.
 */
import { describe, expect, it } from 'vitest';
import { archivedAnswerText, archivedPageText, readArchivedPage } from '../../src/sync/archived-page.js';

const keep = (t: string) => t;

describe('archived pages', () => {
  it('a list answer: its items split back into records and the quarantined, as the walk split them', () => {
    const text = '{"items":[{"id":1,"a":"x"},{"id":"bad"},{"id":2},{"id":2,"dup":true}],"_meta":{"totalCount":4}}';
    const body = archivedAnswerText(
      { text, quarantinedAt: [1, 3] },
      [{ reason: 'no id' }, { reason: 'repeated' }],
      keep,
      8,
    ).join('');
    expect(body).toContain(text);
    expect(readArchivedPage(body)).toEqual({
      records: [{ id: 1, a: 'x' }, { id: 2 }],
      quarantined: [
        { raw: { id: 'bad' }, reason: 'no id' },
        { raw: { id: 2, dup: true }, reason: 'repeated' },
      ],
    });
    expect(
      readArchivedPage(archivedAnswerText({ text, quarantinedAt: [] }, [], keep, 8).join(''))?.records,
    ).toHaveLength(4);
  });

  it('a list answer in parts, each scrubbed, and scrubbed whole when a secret spans two parts', () => {
    const items = Array.from({ length: 50 }, (_, i) => `{"id":${i},"note":"s3cr3t ${i}"}`).join(',');
    const text = `{"items":[${items}]}`;
    const scrub = (t: string) => t.replaceAll('s3cr3t', '[REDACTED]');
    const parts = archivedAnswerText({ text, quarantinedAt: [0] }, [{ reason: 'no s3cr3t' }], scrub, 16);
    expect(parts).toHaveLength(3);
    expect(parts.join('')).not.toContain('s3cr3t');
    expect(readArchivedPage(parts.join(''))?.quarantined).toEqual([
      { raw: { id: 0, note: '[REDACTED] 0' }, reason: 'no [REDACTED]' },
    ]);
    // A secret that is only whole across the head and the answer: `"answer":{"it` in the scrubber's eyes.
    const across = (t: string) => t.replaceAll('"answer":{"it', '[REDACTED]');
    const whole = archivedAnswerText({ text, quarantinedAt: [] }, [], across, 16);
    expect(whole).toHaveLength(1);
    expect(whole.join('')).not.toContain('"answer":{"it');
    // So is one across the answer and the end, and any secret in an answer too short to be split.
    const atEnd = (t: string) => t.replaceAll(']}}', '[REDACTED]');
    expect(archivedAnswerText({ text, quarantinedAt: [] }, [], atEnd, 16).join('')).not.toContain(']}}');
    expect(archivedAnswerText({ text: '{"items":[]}', quarantinedAt: [] }, [], across, 16)).toHaveLength(1);
  });

  it("an answer the scrub leaves as it was is given as the bytes it came in, when they are its text's UTF-8", () => {
    const items = Array.from({ length: 50 }, (_, i) => `{"id":${i},"name":"Zoë ${i}"}`).join(',');
    const text = `{"items":[${items}]}`;
    const bytes = Buffer.from(text);
    const parts = archivedAnswerText({ text, bytes, quarantinedAt: [] }, [], keep, 16);
    expect(parts[1]).toBe(bytes);
    expect(readArchivedPage(Buffer.concat(parts.map((p) => Buffer.from(p))).toString('utf8'))?.records).toHaveLength(
      50,
    );
    // Scrubbed: the text as scrubbed, never the bytes that held the secret.
    const scrubbed = archivedAnswerText({ text, bytes, quarantinedAt: [] }, [], (t) => t.replaceAll('Zoë 7', 'x'), 16);
    expect(typeof scrubbed[1]).toBe('string');
    expect(scrubbed.join('')).not.toContain('Zoë 7');
    // Bytes that are not UTF-8 (the text has replacement characters where they were) are not kept.
    const bad = Buffer.concat([bytes.subarray(0, 20), Buffer.from([0xff]), bytes.subarray(20)]);
    expect(typeof archivedAnswerText({ text, bytes: bad, quarantinedAt: [] }, [], keep, 16)[1]).toBe('string');
  });

  it('records and quarantined records come back as they were, scrubbed', () => {
    const scrub = (t: string) => t.replaceAll('s3cr3t', '[REDACTED]');
    const body = archivedPageText(
      { records: [{ id: 1, note: 's3cr3t' }], quarantined: [{ raw: { x: 1 }, reason: 'r' }] },
      scrub,
    );
    expect(readArchivedPage(body)).toEqual({
      records: [{ id: 1, note: '[REDACTED]' }],
      quarantined: [{ raw: { x: 1 }, reason: 'r' }],
    });
  });

  it('a record JSON.stringify cannot write is kept in its storable form and comes back quarantined', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const body = archivedPageText({ records: [{ id: 1 }, { id: 2, deep }] }, keep);
    const page = readArchivedPage(body);
    expect(page?.records).toEqual([{ id: 1 }]);
    expect(page?.quarantined).toHaveLength(1);
    expect(page?.quarantined?.[0]?.reason).toContain('nested deeper than JSON can be written');
    expect(page?.quarantined?.[0]?.raw).toMatchObject({ id: 2 });
  });
});
