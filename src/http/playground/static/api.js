/**
 * The native API (`/v1`) as the page calls it: JSON requests with the key and tenant headers,
 * paged lists, event streams, and errors as readable messages.
 */
import { $ } from "./dom.js";

/** Headers of every API request: the API key and the tenant, when set. */
export function authHeaders(extra) {
  const headers = Object.assign({}, extra);
  const key = $("api-key").value.trim();
  const tenant = $("tenant").value.trim();
  if (key) headers["x-api-key"] = key;
  if (tenant) headers["x-tenant-id"] = tenant;
  return headers;
}

/** An error answer of the API, with its status and body; the message is for people. */
export class ApiError extends Error {
  constructor(status, body) {
    super(
      describeError(status, body) + (status === 401 ? " Enter an API key under Connection." : ""),
    );
    this.status = status;
    this.body = body;
  }
}

function describeError(status, body) {
  if (body && Array.isArray(body.fields)) {
    const parts = body.fields.map((f) =>
      f.field + ": " + (f.errors || []).map((e) => e.message || e.code).join(", ")
    );
    return "Invalid request: " + parts.join("; ") + " (" + body.code + ")";
  }
  if (body && body.message) return body.message + (body.code ? " (" + body.code + ")" : "");
  return "The server answered HTTP " + status;
}

/** The `ApiError` of a failed response (its JSON body, or its text). */
export async function errorOf(res) {
  const text = await res.text().catch(() => "");
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = { message: text };
  }
  return new ApiError(res.status, body);
}

/** Calls the API with a JSON body (optional) and returns the JSON answer (null for 204). */
export async function api(method, path, body) {
  const init = { method, headers: authHeaders({ accept: "application/json" }) };
  if (body !== undefined) {
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(path, init);
  if (!res.ok) throw await errorOf(res);
  if (res.status === 204) return null;
  return res.json();
}

/** Every item of a list endpoint (oldest first), following next_page. */
export async function listAll(path) {
  const items = [];
  let page = null;
  for (let i = 0; i < 50; i++) {
    const query = "?per_page=1000" + (page ? "&page=" + encodeURIComponent(page) : "");
    const data = await api("GET", path + query);
    items.push(...data.items);
    page = data.next_page;
    if (!page) break;
  }
  return items;
}

/** Encodes an id for a URL path segment. */
export const enc = encodeURIComponent;

/**
 * Opens the event stream of a run (`GET /v1/runs/{id}/events`); the caller reads it with
 * `readEvents` (sse.js). Without `after` it carries the events from now on; with a frame id
 * (`"0"`: from the run's first event) every kept event after it, then the live ones.
 */
export function openEvents(runId, signal, after) {
  const query = after === undefined || after === null ? "" : "?after=" + encodeURIComponent(after);
  return fetch("/v1/runs/" + enc(runId) + "/events" + query, {
    headers: authHeaders({ accept: "text/event-stream" }),
    signal,
  });
}
