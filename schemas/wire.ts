import { z } from 'zod';

/**
 * Wire shapes of the service (spec: "Endpoints", "Authentication", "Errors"). Lenient where the spec is silent
 * (extra members pass through), strict where the client relies on a member (a missing `_meta` would make paging guess).
 */

/** `YYYY-MM-DD HH:MM:SS`, the record timestamp format; the token's `expires_at` is documented as UTC. */
export const API_TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:Z|[+-]00:?00)?$/;

/** A non-negative integer that some servers send as a numeric string. */
const count = z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)]).pipe(z.number().int().min(0));

export const tokenAnswerSchema = z.looseObject({
  access_token: z.string().min(1),
  type: z.string().optional(),
  expires_at: z.string().regex(API_TIMESTAMP, 'expires_at must be YYYY-MM-DD HH:MM:SS'),
});

const pageMetaSchema = z.looseObject({
  // The spec lists it, but a service that leaves it out still pages by `pageCount`: only counting needs it.
  totalCount: count.optional(),
  pageCount: count,
  currentPage: count,
  perPage: count,
});

const linkSchema = z.looseObject({ href: z.string() });

/** Records are only checked to be objects here: their shapes belong to the record schemas of each stream. */
const recordSchema = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'each item must be a JSON object',
);

export const listEnvelopeSchema = z.looseObject({
  items: z.array(recordSchema),
  // Never navigated by (hrefs are relative in some answers, absolute in others): only checked when present.
  _links: z.looseObject({ self: linkSchema, first: linkSchema, last: linkSchema }).partial().optional(),
  _meta: pageMetaSchema,
});

/** Every 4xx/5xx body per the spec: `{name, message, code, status}`. All optional: a proxy may answer anything. */
export const errorBodySchema = z.looseObject({
  name: z.string().optional(),
  message: z.string().optional(),
  code: z.number().int().optional(),
  status: z.number().int().optional(),
});

/** The 422 form seen in public client code: a JSON array of field errors. */
export const fieldErrorsSchema = z.array(z.looseObject({ field: z.string(), message: z.string() }));
export type FieldErrors = z.infer<typeof fieldErrorsSchema>;
