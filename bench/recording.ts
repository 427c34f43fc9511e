/**
 * The replay's recording on disk: the stream on the first line, then one page of raw records per line, so a
 * replaying process can hold the pages as their JSON text (~1.4 MB a page) without ever parsing the whole file:
 * parsing it at once held ~150 MB of objects, and the V8 heap that grew for them, in the process being measured.
 */
import { openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import type { ResolvedStream } from '../connectors/types.js';

export interface Recording {
  stream: ResolvedStream;
  /** Raw records per page, as the API sent them. */
  pages: Record<string, unknown>[][];
}

export function writeRecording(file: string, recording: Recording): void {
  writeFileSync(file, [recording.stream, ...recording.pages].map((x) => JSON.stringify(x)).join('\n'));
}

/** The stream and each page's JSON text. */
export function readRecordingTexts(file: string): { stream: ResolvedStream; texts: string[] } {
  const [head, ...texts] = readFileSync(file, 'utf8').split('\n');
  return { stream: JSON.parse(head ?? 'null') as ResolvedStream, texts };
}

/**
 * The stream, the number of pages, and a reader of the i-th page's records from the file (read when asked: the
 * measured process holds one page at a time, as a backfill does, not the ~30 MB recording).
 */
export function openRecording(file: string): {
  stream: ResolvedStream;
  pages: number;
  page(i: number): Record<string, unknown>[];
} {
  const bytes = readFileSync(file);
  const bounds: number[] = [];
  for (let at = 0; at !== -1; at = bytes.indexOf(10, at + 1)) bounds.push(at);
  bounds.push(bytes.length);
  const stream = JSON.parse(bytes.subarray(0, bounds[1]).toString('utf8')) as ResolvedStream;
  const starts = bounds.slice(1, -1).map((b) => b + 1);
  const ends = bounds.slice(2);
  const fd = openSync(file, 'r');
  return {
    stream,
    pages: starts.length,
    page(i) {
      const start = starts[i] as number;
      const buf = Buffer.alloc((ends[i] as number) - start);
      readSync(fd, buf, 0, buf.length, start);
      return JSON.parse(buf.toString('utf8')) as Record<string, unknown>[];
    },
  };
}

export function readRecording(file: string): Recording {
  const { stream, texts } = readRecordingTexts(file);
  return { stream, pages: texts.map((t) => JSON.parse(t) as Record<string, unknown>[]) };
}
