import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../schemas/config.js';
import { judgeRecordTime } from '../../src/cli/commands/check.js';
import { formatCsv, formatDuration, formatJsonRows, formatTable } from '../../src/cli/output/format.js';
import { budgetFit, runsPerHour } from '../../src/daemon/schedule-budget.js';

describe('formats', () => {
  const columns = ['id', 'name', 'at', 'n'];
  const rows = [
    { id: '9007199254740993', name: 'a, "quoted"\nline', at: '2024-03-01 12:34:56.123456', n: null },
    { id: '2', name: '', at: '2024-03-01 00:00:00', n: 1.5 },
  ];

  it('CSV quotes what needs quoting, keeps digits and empty for null', () => {
    expect(formatCsv(columns, rows)).toBe(
      'id,name,at,n\n9007199254740993,"a, ""quoted""\nline",2024-03-01 12:34:56.123456,\n2,,2024-03-01 00:00:00,1.5\n',
    );
  });

  it('JSON keeps exact strings and column order', () => {
    const parsed = JSON.parse(formatJsonRows(columns, rows));
    expect(parsed[0]).toEqual({
      id: '9007199254740993',
      name: 'a, "quoted"\nline',
      at: '2024-03-01 12:34:56.123456',
      n: null,
    });
    expect(Object.keys(parsed[0])).toEqual(columns);
  });

  it('table aligns, shows NULL only when asked (query results), and keeps bigints whole', () => {
    const t = formatTable(columns, rows, { nullText: 'NULL' });
    expect(t).toContain('9007199254740993');
    expect(t).toContain('NULL');
    expect(formatTable(columns, rows)).not.toContain('NULL');
    expect(t.split('\n')[1]).toMatch(/^-+ {2}-+/);
  });

  it('durations', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('15m')).toBe(900_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('0')).toBe(0);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('15')).toBeNull();
    expect(parseDuration('abc')).toBeNull();
    expect(formatDuration(252_000)).toBe('4m12s');
    expect(formatDuration(850)).toBe('850ms');
  });
});

describe('check: record time zone', () => {
  const server = new Date('2024-05-01T12:00:00Z');
  it('a fresh record matches', () => {
    expect(judgeRecordTime('2024-05-01 11:58:00', server, 'UTC').status).toBe('ok');
  });
  it('a record in the future looks like another zone', () => {
    const j = judgeRecordTime('2024-05-01 14:00:03', server, 'UTC');
    expect(j.status).toBe('warn');
    expect(j.message).toContain('another time zone');
  });
  it('a record exactly some hours old is suspicious', () => {
    expect(judgeRecordTime('2024-05-01 07:00:10', server, 'UTC').status).toBe('warn');
  });
  it('the configured zone is honoured', () => {
    expect(judgeRecordTime('2024-05-01 08:00:00', server, 'America/New_York').status).toBe('ok');
  });
});

describe('schedule: budget fit', () => {
  it('runs per hour from next dates', () => {
    const every15 = Array.from({ length: 8 }, (_, i) => (i + 1) * 900_000);
    expect(runsPerHour(every15)).toBeCloseTo(4);
  });
  it('events x streams x 10 x runs per hour against 12,000', () => {
    const fit = budgetFit({
      events: 20,
      eventStreams: 10,
      otherStreams: 2,
      runsPerHour: 12,
      limit: 2000,
      windowSeconds: 600,
    });
    expect(fit.perRun).toBe((20 * 10 + 2) * 10);
    expect(fit.capacityPerHour).toBe(12_000);
    expect(fit.fits).toBe(false);
    expect(
      budgetFit({ events: 2, eventStreams: 10, otherStreams: 2, runsPerHour: 4, limit: 2000, windowSeconds: 600 }).fits,
    ).toBe(true);
  });
});
