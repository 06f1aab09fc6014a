/**
 * The official client (`client/`) against a real server: every call of the native API, typed run
 * streams, resuming a stream whose connection dropped (mid-stream, and before the start's answer
 * arrived), cancel, and errors as `AgentdError`s with the server's code.
 */
import assert from "node:assert/strict";
import {
  AgentdClient,
  AgentdError,
  ERROR_CODES,
  type RunEvent,
  type RunRequest,
} from "../../client/mod.ts";
import { errors } from "../../src/errors.ts";
import { eventually, pacedModel, startTestServer, type TestServer } from "../_kit/mod.ts";

const say = (text: string): RunRequest["messages"] => [
  { role: "user", content: [{ type: "text", value: text }] },
];

function clientOf(t: TestServer, options: { fetch?: typeof fetch; tenant?: string } = {}) {
  return new AgentdClient({ baseUrl: t.url, ...options });
}

/** The run's events as the server keeps them, from its first. */
async function serverEvents(t: TestServer, runId: string): Promise<RunEvent[]> {
  const all: RunEvent[] = [];
  for await (const event of t.client.runs.events(runId, { after: "0" })) all.push(event);
  return all;
}

/**
 * A `fetch` that cuts the body of run streams: each of the first `cuts` stream responses ends
 * (as a network error) after `frames` frames.
 */
function cuttingFetch(cuts: number, frames: number): { fetch: typeof fetch; cut: () => number } {
  let done = 0;
  const cutting: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (done >= cuts || !res.headers.get("content-type")?.startsWith("text/event-stream")) {
      return res;
    }
    done++;
    const reader = res.body!.getReader();
    let seen = 0;
    let pending = "";
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done: end, value } = await reader.read();
        if (end) return controller.close();
        pending += new TextDecoder().decode(value);
        // Pass whole frames until `frames` of them went through, then fail the connection.
        const parts = pending.split("\n\n");
        pending = parts.pop()!;
        for (const part of parts) {
          if (seen === frames) {
            await reader.cancel();
            return controller.error(new TypeError("network error: connection reset"));
          }
          controller.enqueue(new TextEncoder().encode(`${part}\n\n`));
          if (part.split("\n").some((l) => l.startsWith("data:"))) seen++;
        }
      },
      cancel: () => reader.cancel(),
    });
    return new Response(body, { status: res.status, headers: res.headers });
  };
  return { fetch: cutting, cut: () => done };
}

Deno.test("client: sessions, messages and checkpoints", async () => {
  await using t = await startTestServer();
  const agentd = t.client;
  const session = await agentd.sessions.create({ session_id: "c-1", metadata: { a: 1 } });
  assert.equal(session.session_id, "c-1");
  assert.deepEqual((await agentd.sessions.get("c-1")).metadata, { a: 1 });
  const page = await agentd.sessions.list({ per_page: 10 });
  assert.deepEqual(page.items.map((s) => s.session_id), ["c-1"]);

  const message = await agentd.messages.create("c-1", {
    message_id: "m-1",
    role: "user",
    content: [{ type: "text", value: "kept" }],
  });
  assert.equal(message.message_id, "m-1");
  assert.equal((await agentd.messages.get("c-1", "m-1")).content[0].type, "text");
  await agentd.messages.delete("c-1", "m-1");
  assert.equal((await agentd.messages.list("c-1")).count, 0);

  await agentd.runs.stream({ session_id: "c-1", messages: say("hello there") }).done();
  const checkpoints = await agentd.checkpoints.list("c-1", { per_page: 1 });
  assert.equal(checkpoints.items.length, 1);
  assert.ok(checkpoints.next_page === null || typeof checkpoints.next_page === "string");
  const one = await agentd.checkpoints.get("c-1", checkpoints.items[0].checkpoint_id);
  assert.equal(one.session_id, "c-1");
  const messages = await agentd.messages.list("c-1");
  assert.deepEqual(messages.items.map((m) => m.role), ["user", "assistant"]);

  await agentd.sessions.delete("c-1");
  await assert.rejects(agentd.sessions.get("c-1"), (err: AgentdError) => {
    assert.ok(err instanceof AgentdError);
    assert.equal(err.code, ERROR_CODES.sessionNotFound);
    assert.equal(err.status, 404);
    assert.match(err.message, /session 'c-1' not found/);
    assert.ok(err.requestId);
    return true;
  });
});

Deno.test("client: a run's typed events; detached runs; list, read and cancel", async () => {
  await using t = await startTestServer();
  const agentd = t.client;
  const stream = agentd.runs.stream({ session_id: "r-1", messages: say("typed run events") });
  let text = "";
  const kinds: string[] = [];
  for await (const event of stream) {
    kinds.push(event.kind);
    // A kind narrows the event to its fields.
    if (event.kind === "text_message_content") text += event.delta;
  }
  assert.equal(text, "typed run events");
  assert.equal(kinds[0], "run_started");
  assert.equal(stream.finished?.status, "completed");
  assert.equal(stream.sessionId, "r-1");
  assert.equal(stream.reconnects, 0);
  assert.equal((await agentd.runs.get(stream.runId)).status, "completed");
  const steps = await agentd.runs.steps(stream.runId);
  assert.deepEqual(steps.map((s) => [s.kind, s.attempt]), [["model", 1]]);
  assert.ok(steps[0].duration_ms >= 0);

  const started = await agentd.runs.start({
    session_id: "r-1",
    model: pacedModel(200),
    messages: say("one two three four five six seven eight"),
  });
  await eventually(async () => (await agentd.runs.get(started.run_id)).status === "running");
  const listed = await agentd.runs.list("r-1", { statuses: ["running"] });
  assert.deepEqual(listed.items.map((r) => r.run_id), [started.run_id]);
  // Re-attach live; once it reads, cancel: the stream ends with the cancelled run_finished.
  const live = agentd.runs.events(started.run_id)[Symbol.asyncIterator]();
  assert.equal((await live.next()).value?.kind, "text_message_content");
  await agentd.runs.cancel(started.run_id);
  let last: RunEvent | undefined;
  for (let next = await live.next(); !next.done; next = await live.next()) last = next.value;
  assert.equal(last?.kind === "run_finished" && last.status, "cancelled");
  await agentd.runs.cancel(started.run_id); // nothing happens to a run that ended
});

Deno.test("client: a stream whose connection drops resumes by cursor, each event once", async () => {
  await using t = await startTestServer();
  const { fetch: cutting, cut } = cuttingFetch(2, 3);
  const agentd = clientOf(t, { fetch: cutting });
  const stream = agentd.runs.stream({
    session_id: "d-1",
    model: pacedModel(20),
    messages: say("a b c d e f g h i j k l"),
  }, { reconnect: { delayMs: 10 } });
  const got: RunEvent[] = [];
  for await (const event of stream) got.push(event);
  assert.equal(cut(), 2);
  assert.equal(stream.reconnects, 2);
  assert.deepEqual(got, await serverEvents(t, stream.runId));
  assert.equal(got.at(-1)?.kind, "run_finished");
  assert.equal(stream.finished?.status, "completed");
});

Deno.test("client: a start whose answer was lost is resumed, not run twice", async () => {
  await using t = await startTestServer();
  let lost = 0;
  const losing: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (init?.method === "POST" && String(input).endsWith("/v1/runs") && lost++ === 0) {
      await res.body?.cancel();
      throw new TypeError("network error: the answer was lost");
    }
    return res;
  };
  const agentd = clientOf(t, { fetch: losing });
  const stream = agentd.runs.stream({ session_id: "l-1", messages: say("only once") }, {
    reconnect: { delayMs: 10 },
  });
  const got: RunEvent[] = [];
  for await (const event of stream) got.push(event);
  assert.equal(lost, 2, "the start was sent again (and refused as a run that exists)");
  assert.deepEqual(got, await serverEvents(t, stream.runId));
  const runs = await t.client.runs.list("l-1");
  assert.equal(runs.count, 1, "one run");
});

Deno.test("client: errors carry the server's code, a validation error its fields", async () => {
  await using t = await startTestServer();
  const agentd = t.client;
  await assert.rejects(
    agentd.runs.stream({ messages: [] }).done(),
    (err: AgentdError) => {
      assert.equal(err.code, ERROR_CODES.validation);
      assert.deepEqual(err.fields?.map((f) => f.field), ["messages"]);
      return true;
    },
  );
  await agentd.runs.stream({ run_id: "e-1", messages: say("first") }).done();
  // A start that reuses an id is refused, not mistaken for its own earlier try.
  await assert.rejects(
    agentd.runs.stream({ run_id: "e-1", messages: say("again") }).done(),
    (err: AgentdError) => err.code === ERROR_CODES.runExists,
  );
  await assert.rejects(
    clientOf(t, { tenant: "not a tenant!" }).sessions.list(),
    (err: AgentdError) => err.code === ERROR_CODES.badTenant,
  );
  await assert.rejects(
    agentd.runs.events("e-1").done(),
    (err: AgentdError) => err.code === ERROR_CODES.runNotRunning,
  );
});

Deno.test("client: ERROR_CODES names every code of src/errors.ts by its constructor", () => {
  const server = Object.fromEntries(
    Object.entries(errors).map(([name, make]) => [
      name,
      (make as (...args: unknown[]) => { code: number })("x", "y").code,
    ]),
  );
  assert.deepEqual(ERROR_CODES, server);
});

Deno.test("client: its JavaScript imports nothing outside client/", async () => {
  const dir = new URL("../../client/", import.meta.url);
  for await (const entry of Deno.readDir(dir)) {
    const source = await Deno.readTextFile(new URL(entry.name, dir));
    for (const m of source.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gms)) {
      if (m[3].startsWith("./")) continue;
      assert.ok(m[2], `${entry.name}: '${m[0].split("\n")[0]}' must be a type-only import`);
    }
  }
});
