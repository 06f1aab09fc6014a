/**
 * How the client talks HTTP: the base URL, the headers every request carries (API key, tenant),
 * JSON bodies, query strings, and error answers as `AgentdError`s.
 */
import { errorOf } from "./errors.ts";

/** How to reach a server. */
export interface ClientOptions {
  /** The server's base URL (`http://127.0.0.1:8080`); relative to the page in a browser. */
  baseUrl: string;
  /** An API key, sent as `Authorization: Bearer <key>` (docs/auth.md). */
  apiKey?: string;
  /** The tenant, sent as `X-Tenant-ID` (the server's default tenant when absent). */
  tenant?: string;
  /** More headers for every request. */
  headers?: Record<string, string>;
  /** The `fetch` to use (the global one by default). */
  fetch?: typeof fetch;
}

/** A query string's values: absent ones are left out, lists repeat the parameter. */
export type Query = Record<string, string | number | boolean | string[] | undefined>;

/** One request's particulars. */
export interface RequestOptions {
  method?: string;
  query?: Query;
  /** A JSON body. */
  json?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** The HTTP side of a client: requests relative to the base URL, errors thrown. */
export class Http {
  readonly #options: ClientOptions;

  constructor(options: ClientOptions) {
    this.#options = options;
  }

  /** The response of a request, or the `AgentdError` of an error answer. */
  async request(path: string, options: RequestOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.#options.headers, ...options.headers };
    if (this.#options.apiKey) headers.authorization = `Bearer ${this.#options.apiKey}`;
    if (this.#options.tenant) headers["x-tenant-id"] = this.#options.tenant;
    if (options.json !== undefined) headers["content-type"] = "application/json";
    const doFetch = this.#options.fetch ?? fetch;
    const res = await doFetch(this.url(path, options.query), {
      method: options.method ?? "GET",
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
      signal: options.signal,
    });
    if (!res.ok) throw await errorOf(res);
    return res;
  }

  /** The JSON of a request's answer. */
  async json<T>(path: string, options: RequestOptions = {}): Promise<T> {
    return await (await this.request(path, options)).json() as T;
  }

  /** A request whose answer has no body (204). */
  async empty(path: string, options: RequestOptions = {}): Promise<void> {
    const res = await this.request(path, options);
    await res.body?.cancel();
  }

  /** The absolute URL of `path` with `query`. */
  url(path: string, query: Query = {}): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(query)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) params.append(name, String(v));
    }
    const search = params.size > 0 ? `?${params}` : "";
    return `${this.#options.baseUrl.replace(/\/+$/, "")}${path}${search}`;
  }
}

/** A path segment: an id, escaped. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}
