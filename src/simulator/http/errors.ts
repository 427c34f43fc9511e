import type { Json } from '../core/record.js';

/** Error names and the spec's messages (the spec gives texts for 401, 403, 404 and 500; the rest are ours). */
const NAMES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Entity',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

export const MESSAGES = {
  unauthorized: 'Your request was made with invalid credentials.',
  forbidden: 'You do not have access to that resource.',
  notFound: 'The requested resource does not exist.',
  internal: 'An error occurred while processing your request.',
  rateLimited: 'Rate limit exceeded.',
} as const;

/** The spec's error body: `{name, message, code: 0, status}`. */
export function errorBody(status: number, message: string): Json {
  return { name: NAMES[status] ?? 'Error', message, code: 0, status };
}

/** Thrown by handlers; the server turns it into the response. 422 carries the facts page's field-error array. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly fieldErrors?: { field: string; message: string }[],
  ) {
    super(message);
  }

  body(): Json {
    if (this.status === 422 && this.fieldErrors) return this.fieldErrors;
    return errorBody(this.status, this.message);
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const notFound = () => new HttpError(404, MESSAGES.notFound);
export const forbidden = () => new HttpError(403, MESSAGES.forbidden);
export const unprocessable = (field: string, message: string) =>
  new HttpError(422, 'Data Validation Failed.', [{ field, message }]);
