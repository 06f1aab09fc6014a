/**
 * The JSON-RPC binding on the wire, with requests no SDK would send: malformed envelopes get
 * JSON-RPC's own error codes (never a 5xx), A2A errors their A2A codes with an ErrorInfo in
 * `data`, notifications no reply, and the streaming methods SSE frames that are JSON-RPC
 * responses.
 */
import assert from "node:assert/strict";
import { readSse, startTestServer } from "../../_kit/mod.ts";
import { rpc, rpcError } from "./sdk.ts";

const manifest = {
  agent: { name: "a2a-jsonrpc", model: { provider: "echo" } },
  http_server: { max_body_bytes: 4096, protocol: { a2a: {} } },
};

const send = (text: string, extra: Record<string, unknown> = {}) => ({
  message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra },
});

Deno.test("jsonrpc: malformed requests get JSON-RPC's error codes, never a 5xx", async () => {
  await using t = await startTestServer({ manifest });

  // Not JSON at all: parse error, id null.
  await rpcError(await rpc(t, null, { raw: '{"jsonrpc": "2.0", "id": 1, "method": ' }), -32700, {
    id: null,
  });
  // JSON, but not one request object.
  for (const raw of ["42", '"SendMessage"', "null", "[]"]) {
    await rpcError(await rpc(t, null, { raw }), -32600, { id: null });
  }
  // A batch is not supported: one error for the whole array.
  const batch = await rpcError(
    await rpc(t, [{ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }]),
    -32600,
    { id: null },
  );
  assert.match(batch.message, /batch/);
  // A wrong or missing `jsonrpc`, a missing method: invalid request, with the id when usable.
  await rpcError(await rpc(t, { jsonrpc: "1.0", id: 3, method: "GetTask" }), -32600, { id: 3 });
  await rpcError(await rpc(t, { id: "a", method: "GetTask" }), -32600, { id: "a" });
  await rpcError(await rpc(t, { jsonrpc: "2.0", id: 4 }), -32600, { id: 4 });
  await rpcError(await rpc(t, { jsonrpc: "2.0", id: 5, method: 12 }), -32600, { id: 5 });
  await rpcError(await rpc(t, { jsonrpc: "2.0", id: { no: 1 }, method: "GetTask" }), -32600, {
    id: null,
  });
  // Unknown methods; v0.3 names point to their 1.0 names.
  await rpcError(await rpc(t, { jsonrpc: "2.0", id: 6, method: "DoThings", params: {} }), -32601, {
    id: 6,
  });
  const legacy = await rpcError(
    await rpc(t, { jsonrpc: "2.0", id: 7, method: "message/send", params: send("x") }),
    -32601,
    { id: 7 },
  );
  assert.match(legacy.message, /SendMessage/);
  // Missing or malformed params: invalid params, with the failing fields.
  await rpcError(await rpc(t, { jsonrpc: "2.0", id: 8, method: "GetTask" }), -32602, { id: 8 });
  await rpcError(await rpc(t, { jsonrpc: "2.0", id: 9, method: "GetTask", params: ["x"] }), -32602);
  const fields = await rpcError(
    await rpc(t, { jsonrpc: "2.0", id: 10, method: "SendMessage", params: { message: {} } }),
    -32602,
  );
  const violations = fields.data?.find((d) =>
    d["@type"] === "type.googleapis.com/google.rpc.BadRequest"
  ) as
    | { fieldViolations: { field: string }[] }
    | undefined;
  assert.ok(violations?.fieldViolations.some((v) => v.field.startsWith("params.message")));
  await rpcError(
    await rpc(t, {
      jsonrpc: "2.0",
      id: 11,
      method: "GetTask",
      params: { id: "x", historyLength: -1 },
    }),
    -32602,
  );
  await rpcError(
    await rpc(t, {
      jsonrpc: "2.0",
      id: 12,
      method: "SendMessage",
      params: send("x", { role: "ROLE_AGENT" }),
    }),
    -32602,
  );
  // A body that is not JSON by its media type: A2A's ContentTypeNotSupportedError, as a JSON-RPC
  // error (the id is unknown: the body was not read).
  for (const type of ["text/plain", "application/x-www-form-urlencoded"]) {
    const wrongType = await rpcError(
      await rpc(t, null, {
        raw: '{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}',
        headers: { "content-type": type },
      }),
      -32005,
      { id: null },
    );
    const info = wrongType.data?.[0] as { reason: string; metadata: { contentType: string } };
    assert.equal(info.reason, "CONTENT_TYPE_NOT_SUPPORTED");
    assert.equal(info.metadata.contentType, type);
  }
  // agentd's own refusals keep their HTTP status, the native code as the error code.
  const big = JSON.stringify({
    jsonrpc: "2.0",
    id: 13,
    method: "SendMessage",
    params: send("x".repeat(5000)),
  });
  await rpcError(await rpc(t, null, { raw: big }), 413001, { status: 413, id: null });
});

Deno.test("jsonrpc: A2A errors carry their codes and an ErrorInfo", async () => {
  await using t = await startTestServer({ manifest });
  const notFound = await rpcError(
    await rpc(t, { jsonrpc: "2.0", id: "g1", method: "GetTask", params: { id: "nope" } }),
    -32001,
    { id: "g1" },
  );
  const info = notFound.data?.[0] as {
    reason: string;
    domain: string;
    metadata: { taskId: string };
  };
  assert.equal(info.reason, "TASK_NOT_FOUND");
  assert.equal(info.domain, "a2a-protocol.org");
  assert.equal(info.metadata.taskId, "nope");
  await rpcError(
    await rpc(t, { jsonrpc: "2.0", id: 2, method: "CancelTask", params: { id: "nope" } }),
    -32001,
  );
  await rpcError(await rpc(t, { jsonrpc: "2.0", id: 3, method: "CancelTask", params: {} }), -32602);
  await rpcError(
    await rpc(t, { jsonrpc: "2.0", id: 4, method: "SubscribeToTask", params: { id: "nope" } }),
    -32001,
  );
  await rpcError(
    await rpc(t, { jsonrpc: "2.0", id: 5, method: "SendMessage", params: send("x") }, {
      headers: { "A2A-Version": "0.3" },
    }),
    -32009,
  );
  const raw = { message: { messageId: "r", role: "ROLE_USER", parts: [{ raw: "Ynl0ZXM=" }] } };
  await rpcError(
    await rpc(t, { jsonrpc: "2.0", id: 6, method: "SendMessage", params: raw }),
    -32005,
  );
  const done =
    await (await rpc(t, { jsonrpc: "2.0", id: 7, method: "SendMessage", params: send("hi") }))
      .json();
  assert.equal(done.id, 7);
  assert.equal(done.result.task.status.state, "TASK_STATE_COMPLETED");
  // The proto field name (`history_length`), which ProtoJSON parsers accept, works as the JSON
  // name does; both at once is a duplicate field.
  const historyOf = async (params: Record<string, unknown>) =>
    (await (await rpc(t, {
      jsonrpc: "2.0",
      id: 70,
      method: "GetTask",
      params: { id: done.result.task.id, ...params },
    })).json()).result.history.length;
  assert.equal(await historyOf({}), 2, "the whole history without a length");
  assert.equal(await historyOf({ historyLength: 1 }), 1);
  assert.equal(await historyOf({ history_length: 1 }), 1);
  const listed = await (await rpc(t, {
    jsonrpc: "2.0",
    id: 71,
    method: "ListTasks",
    params: { context_id: done.result.task.contextId, history_length: 1, page_size: 1 },
  })).json();
  assert.deepEqual(listed.result.tasks.map((x: { id: string }) => x.id), [done.result.task.id]);
  assert.equal(listed.result.tasks[0].history.length, 1);
  await rpcError(
    await rpc(t, {
      jsonrpc: "2.0",
      id: 72,
      method: "GetTask",
      params: { id: done.result.task.id, historyLength: 1, history_length: 2 },
    }),
    -32602,
  );
  await rpcError(
    await rpc(t, {
      jsonrpc: "2.0",
      id: 8,
      method: "CancelTask",
      params: { id: done.result.task.id },
    }),
    -32002,
  );
  await rpcError(
    await rpc(t, {
      jsonrpc: "2.0",
      id: 9,
      method: "SubscribeToTask",
      params: { id: done.result.task.id },
    }),
    -32004,
  );
  // The method that exists on the HTTP+JSON binding only as a path is no method here.
  const get = await t.fetch("/a2a");
  assert.equal(get.status, 405);
  assert.equal(get.headers.get("allow"), "POST");
  await get.body?.cancel();
});

Deno.test("jsonrpc: streaming methods answer SSE whose frames are JSON-RPC responses", async () => {
  await using t = await startTestServer({ manifest });
  const res = await rpc(t, {
    jsonrpc: "2.0",
    id: "s1",
    method: "SendStreamingMessage",
    params: send("a b"),
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  const frames = await readSse(res).json<
    { jsonrpc: string; id: string; result: Record<string, unknown> }
  >();
  assert.ok(frames.every((f) => f.jsonrpc === "2.0" && f.id === "s1"));
  assert.deepEqual(frames.map((f) => Object.keys(f.result)[0]), [
    "task",
    "statusUpdate",
    "artifactUpdate",
    "artifactUpdate",
    "statusUpdate",
  ]);
  // The trailing slash reaches the same endpoint.
  const slash = await rpc(t, { jsonrpc: "2.0", id: 2, method: "GetTask", params: { id: "x" } }, {
    base: "/a2a/",
  });
  await rpcError(slash, -32001, { id: 2 });
});

Deno.test("jsonrpc: a notification is executed and not answered", async () => {
  await using t = await startTestServer({ manifest });
  const contextId = `ctx-${crypto.randomUUID()}`;
  const res = await rpc(t, {
    jsonrpc: "2.0",
    method: "SendMessage",
    params: send("note", { contextId }),
  });
  assert.equal(res.status, 204);
  assert.equal(await res.text(), "");
  const runs = await (await t.fetch(`/v1/sessions/${contextId}/runs`)).json();
  assert.equal(runs.count, 1);
  // Even a failing notification gets no reply.
  const bad = await rpc(t, { jsonrpc: "2.0", method: "GetTask", params: { id: "nope" } });
  assert.equal(bad.status, 204);
  await bad.body?.cancel();
});
