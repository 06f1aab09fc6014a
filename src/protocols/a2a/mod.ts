/**
 * The A2A add-on (A2A v1.0, HTTP+JSON binding): an A2A task is a native run, an A2A context a
 * session. `addon.ts` is what the app mounts, `routes.ts` the HTTP surface, `http_json.ts` and
 * `jsonrpc.ts` its two bindings, `operations.ts`, `send.ts` and `subscribe.ts` the calls into the
 * run service, `request.ts` the request mapping, `task.ts` the record → task view, `encoder.ts` the
 * pure internal-event → A2A-stream encoder (`a2aFrames`), `card.ts` the Agent Card. See
 * docs/a2a.md.
 */
export { a2aAddOn } from "./addon.ts";
