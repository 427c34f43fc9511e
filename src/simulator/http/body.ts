/**
 * The simulator's HTTP folder: the server, its router, request bodies and the service's error answers; this file
 * reads a request's body within the service's bound.
 */
import type { IncomingMessage } from 'node:http';
import { badRequest, HttpError } from './errors.js';

const LIMIT = 1 << 20;

/** Reads a request body (up to 1 MiB). */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > LIMIT) throw new HttpError(413, 'Request body too large.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Form (`application/x-www-form-urlencoded`) or JSON object body as text members. */
export function parseBody(text: string, contentType: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (text.trim() === '') return out;
  if ((contentType ?? '').includes('json')) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw badRequest('Invalid JSON body.');
    }
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
    }
    return out;
  }
  for (const [k, v] of new URLSearchParams(text)) out[k] = v;
  return out;
}
