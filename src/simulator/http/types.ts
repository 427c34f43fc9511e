import type { Json } from '../core/record.js';

export interface ApiRequest {
  method: string;
  /** Path under /v1, `.json` suffix removed. */
  path: string;
  query: URLSearchParams;
  /** Numeric path parameters by name. */
  params: Record<string, number>;
  /** Form or JSON body members as text. */
  body: Record<string, string>;
  /** The calling account (bearer token), or -1 for the token endpoint. */
  account: number;
  headers: Record<string, string | string[] | undefined>;
}

export interface ApiResponse {
  status: number;
  /** A pre-serialized JSON body (lists serialize once), a value to serialize, or nothing (204). */
  body?: string | Json;
  headers?: Record<string, string | number>;
}

export type Handler = (req: ApiRequest) => ApiResponse;
