/** `streams.<name>.customFieldTypes` in evsync.config.json: read as written, or refused naming the key. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/cli/config.js';
import { tempDir, writeConfig } from './helpers.js';

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir());
});
afterEach(() => cleanup());

const read = () => resolveConfig({}, {}, dir).values;

describe('customFieldTypes in evsync.config.json', () => {
  it('is read as written', () => {
    writeConfig(dir, { streams: { registrants: { customFieldTypes: { c_12: 'text', c_7: 'bigint' } } } });
    expect(read().streams?.registrants?.customFieldTypes).toEqual({ c_12: 'text', c_7: 'bigint' });
  });

  it('refuses an unknown type, naming the stream, the field and the valid types', () => {
    writeConfig(dir, { streams: { registrants: { customFieldTypes: { c_7: 'number' } } } });
    expect(read).toThrow(
      'evsync.config.json: streams.registrants: stream "registrants": customFieldTypes.c_7: unknown type "number"; valid: bigint, integer, double, text, boolean, timestamp, date, time, decimal(p,s)',
    );
  });

  it('refuses a name that is not a custom field name', () => {
    writeConfig(dir, { streams: { registrants: { customFieldTypes: { email: 'text' } } } });
    expect(read).toThrow(
      'evsync.config.json: streams.registrants: stream "registrants": customFieldTypes: "email" is not a custom field name (c_<id>, the id of its definition)',
    );
  });

  it('refuses a value that is not a type name, and a stream without custom fields', () => {
    writeConfig(dir, { streams: { registrants: { customFieldTypes: { c_7: 7 } } } });
    expect(read).toThrow('streams.registrants.customFieldTypes.c_7: expected a type name such as "text" or "bigint"');
    writeConfig(dir, { streams: { events: { customFieldTypes: { c_7: 'text' } } } });
    expect(read).toThrow('streams.events: stream "events" has no custom fields: customFieldTypes cannot apply to it');
  });
});
