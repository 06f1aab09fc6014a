/**
 * What the A2A tests share: `@a2a-js/sdk` clients over either of its transports (JSON-RPC and
 * REST) and the suites that run scenarios over them, builders of its request objects, readers of
 * its results, and the raw error checks.
 */
import assert from "node:assert/strict";
import {
  type Message,
  type Part,
  Role,
  type SendMessageConfiguration,
  type SendMessageRequest,
  type StreamResponse,
  type Task,
  TaskState,
} from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  JsonRpcTransportFactory,
  type RequestOptions,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import { startTestServer, type StoreKind, type TestServer } from "../../_kit/mod.ts";
import { bindingsManifest } from "./agents.ts";

/** The SDK's transports, by the binding names of the card. */
export type Transport = "JSONRPC" | "HTTP+JSON";

/** Both transports, for suites that run the same scenarios over each. */
export const transports: readonly Transport[] = ["JSONRPC", "HTTP+JSON"];

/** A client factory that speaks only `transport`. */
export function factoryFor(transport: Transport): ClientFactory {
  const factory = transport === "JSONRPC"
    ? new JsonRpcTransportFactory()
    : new RestTransportFactory();
  return new ClientFactory({ transports: [factory] });
}

/**
 * A client of the server's A2A add-on over `transport`, built from the card. With the trailing
 * slash the SDK resolves `.well-known/agent-card.json` under the base.
 */
export async function clientFor(
  t: TestServer,
  transport: Transport,
  base = "/a2a",
): Promise<Client> {
  return await factoryFor(transport).createFromUrl(`${t.url}${base}/`);
}

/**
 * Runs `scenarios` (steps of `tt`) against one server of `manifest` on `store`, through an SDK
 * client over HTTP+JSON.
 */
export async function overHttpJson(
  tt: Deno.TestContext,
  store: StoreKind,
  manifest: Record<string, unknown>,
  scenarios: (tt: Deno.TestContext, t: TestServer, client: Client) => Promise<void>,
): Promise<void> {
  await using t = await startTestServer({ store, manifest });
  await scenarios(tt, t, await clientFor(t, "HTTP+JSON"));
}

/**
 * Runs the same `scenarios` over each transport, a step per transport, against one server of the
 * bindings' agent on `store`: the two bindings are one set of operations, so every answer must be
 * the same.
 */
export async function overEachBinding(
  tt: Deno.TestContext,
  store: StoreKind,
  scenarios: (
    tt: Deno.TestContext,
    t: TestServer,
    client: Client,
    transport: Transport,
  ) => Promise<void>,
): Promise<void> {
  await using t = await startTestServer({ store, manifest: bindingsManifest });
  for (const transport of transports) {
    const client = await clientFor(t, transport);
    await tt.step(`over ${transport}`, (tt) => scenarios(tt, t, client, transport));
  }
}

/** A text part. */
export function text(value: string): Part {
  return { content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "" };
}

/** A data part holding any JSON value. */
export function data(value: unknown): Part {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "" };
}

/** A user message with a fresh id. */
export function message(parts: Part[], extra: Partial<Message> = {}): Message {
  return {
    messageId: crypto.randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts,
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
    ...extra,
  };
}

/** A `SendMessageRequest`. */
export function request(
  msg: Message,
  configuration: Partial<SendMessageConfiguration> = {},
  extra: Partial<SendMessageRequest> = {},
): SendMessageRequest {
  return {
    tenant: "",
    message: msg,
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      returnImmediately: false,
      ...configuration,
    },
    metadata: undefined,
    ...extra,
  };
}

/** The result of a send as a task (agentd always answers one). */
export function asTask(result: Task | Message): Task {
  assert.ok("status" in result, `a task, got ${JSON.stringify(result)}`);
  return result as Task;
}

/** The text of the task's `response` artifacts, in order. */
export function artifactText(task: Task): string {
  return task.artifacts.filter((a) => a.name === "response").flatMap((a) => a.parts)
    .map((p) => p.content?.$case === "text" ? p.content.value : "").join("");
}

/** The value of the task's `state` artifact. */
export function stateOf(task: Task): unknown {
  const artifact = task.artifacts.find((a) => a.artifactId === "state");
  const part = artifact?.parts[0]?.content;
  return part?.$case === "data" ? part.value : undefined;
}

/** The `$case` of a stream event. */
export function payloadCase(event: StreamResponse): string {
  return event.payload?.$case ?? "none";
}

/** The task state a stream event carries (task or status update), if any. */
export function stateOfEvent(event: StreamResponse): TaskState | undefined {
  const p = event.payload;
  if (p?.$case === "task" || p?.$case === "statusUpdate") return p.value.status?.state;
  return undefined;
}

/** Every event of a stream. */
export async function collect(events: AsyncIterable<StreamResponse>): Promise<StreamResponse[]> {
  const out: StreamResponse[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/**
 * Awaits `promise` to reject with the SDK's error of `reason` (its ErrorInfo reason on REST, its
 * JSON-RPC code on JSON-RPC: the SDK maps both to the same error class), and HTTP `status` when
 * given (REST).
 */
export async function rejects(
  promise: Promise<unknown>,
  reason: string,
  status?: number,
): Promise<Error> {
  try {
    await promise;
  } catch (err) {
    const e = err as Error & { reason?: string; statusCode?: number };
    assert.equal(e.reason, reason, `reason of ${e.name}: ${e.message}`);
    if (status !== undefined) {
      assert.equal(e.statusCode, status, `status of ${e.name}: ${e.message}`);
    }
    return e;
  }
  assert.fail(`expected ${reason}`);
}

/** Options that send `headers` as service parameters (`A2A-Extensions`, `X-Tenant-ID`, ...). */
export function withHeaders(headers: Record<string, string>): RequestOptions {
  return { serviceParameters: headers };
}

/** The native status a task state corresponds to. */
export const NATIVE: Partial<Record<TaskState, string>> = {
  [TaskState.TASK_STATE_WORKING]: "running",
  [TaskState.TASK_STATE_COMPLETED]: "completed",
  [TaskState.TASK_STATE_FAILED]: "failed",
  [TaskState.TASK_STATE_CANCELED]: "cancelled",
  [TaskState.TASK_STATE_INPUT_REQUIRED]: "interrupted",
};

/** The native run of a task id. */
export async function nativeRun(t: TestServer, id: string, tenant?: string) {
  const res = await t.fetch(`/v1/runs/${id}`, { tenant });
  assert.equal(res.status, 200, await res.clone().text());
  return await res.json();
}

/** Checks a task against its native run: the same session, the status its state stands for. */
export async function assertSameAsNative(
  t: TestServer,
  task: { id: string; contextId: string; status?: { state: TaskState } },
  tenant?: string,
): Promise<void> {
  const run = await nativeRun(t, task.id, tenant);
  assert.equal(run.session_id, task.contextId);
  assert.equal(run.status, NATIVE[task.status!.state], `task ${task.id}`);
}

/** Reads a raw HTTP+JSON error response: JSON, `google.rpc.Status` with an ErrorInfo. */
export async function restError(res: Response, status: number, reason: string) {
  const body = await res.json();
  assert.equal(res.status, status, JSON.stringify(body));
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(body.error.code, status);
  assert.equal(typeof body.error.status, "string");
  assert.equal(typeof body.error.message, "string");
  const info = body.error.details.find((d: { "@type": string }) =>
    d["@type"] === "type.googleapis.com/google.rpc.ErrorInfo"
  );
  assert.ok(info, JSON.stringify(body));
  assert.equal(info.reason, reason);
  return body.error;
}

/** Posts one JSON-RPC request (or any body) to the base and returns the response. */
export function rpc(
  t: TestServer,
  body: unknown,
  init: { headers?: Record<string, string>; raw?: string; base?: string } = {},
): Promise<Response> {
  return t.fetch(init.base ?? "/a2a", {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: init.raw ?? JSON.stringify(body),
  });
}

/** Reads a JSON-RPC error response: HTTP `status`, the envelope, the error `code`. */
export async function rpcError(
  res: Response,
  code: number,
  options: { status?: number; id?: unknown } = {},
) {
  const text = await res.text();
  assert.equal(res.status, options.status ?? 200, text);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  const body = JSON.parse(text);
  assert.equal(body.jsonrpc, "2.0", text);
  assert.equal(body.result, undefined, text);
  if ("id" in options) assert.equal(body.id, options.id, text);
  assert.equal(body.error.code, code, text);
  assert.equal(typeof body.error.message, "string", text);
  return body.error as { code: number; message: string; data?: Record<string, unknown>[] };
}
