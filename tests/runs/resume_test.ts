/**
 * Resuming a run's event stream by cursor on the native API: a client drops a long run's stream at
 * a random frame and resumes it with `Last-Event-ID` (the text is whole, no frame twice), on the
 * memory and the Redis pub/sub; a run that ended within the retention window gives its rest, then
 * 204; an expired one 410001; a browser's `EventSource` reconnects by itself through a connection
 * that breaks mid-stream.
 */
import assert from "node:assert/strict";
import {
  assertError,
  dropSchema,
  eventually,
  readSse,
  type SseEvent,
  startTestServer,
  testPostgresUrl,
  testRedisUrl,
  uniqueName,
  userText,
} from "../_kit/mod.ts";
import { longRun, randomCut, WORDS } from "./long_run.ts";
import { makeEvent } from "../../src/api/events.ts";
import type { Run } from "../../src/api/schemas.ts";
import { HISTORY_DEFAULTS } from "../../src/pubsub/mod.ts";
import { createMemoryPubSub } from "../../src/pubsub/memory.ts";
import { runChannel } from "../../src/runs/channel.ts";
import { openRunStream } from "../../src/runs/stream.ts";
import { ReplayBudget } from "../../src/runs/replay_budget.ts";

/** The text of native frames' `text_message_content` deltas. */
function textOf(events: SseEvent[]): string {
  return events.filter((e) => e.event === "text_message_content")
    .map((e) => JSON.parse(e.data).delta as string).join("");
}

/** Frame ids as numbers, checked to be there, unique and increasing. */
function assertIds(events: SseEvent[]): number[] {
  const ids = events.map((e) => Number(e.id));
  for (const [i, id] of ids.entries()) {
    assert.ok(Number.isInteger(id) && id > 0, `frame ${i} has id ${events[i].id}`);
    if (i > 0) assert.ok(id > ids[i - 1], `ids increase: ${ids[i - 1]} then ${id}`);
  }
  return ids;
}

const pubsubs: [string, Record<string, unknown> | null][] = [
  ["memory", {}],
  ["redis", testRedisUrl ? { kind: "redis", url: testRedisUrl } : null],
];

for (const [label, pubsub] of pubsubs) {
  Deno.test({
    name: `resume by cursor (${label} pub/sub)`,
    ignore: pubsub === null,
  }, async (tt) => {
    await using t = await startTestServer({
      manifest: {
        runtime: { pubsub: { ...pubsub, prefix: uniqueName("resume") } },
      },
    });

    await tt.step("a client drops a long run at a random frame and resumes it", async () => {
      const cut = randomCut(3, 200);
      const res = await t.fetch("/v1/runs", {
        method: "POST",
        json: longRun({ on_disconnect: "continue" }),
      });
      assert.equal(res.status, 200);
      const runId = res.headers.get("x-run-id")!;
      const first = readSse(res);
      for (let i = 0; i < cut; i++) assert.ok(!(await first.next()).done, `frame ${i}`);
      await first.cancel();
      const before = first.events;
      // The run goes on: the client asked it to.
      const resumed = await t.fetch(`/v1/runs/${runId}/events`, {
        headers: { "last-event-id": before.at(-1)!.id! },
      });
      assert.equal(resumed.status, 200, `resumed after frame ${cut}`);
      const after = await readSse(resumed).all();
      assert.equal(after[0].retry, 1000, "EventSource is told when to reconnect");
      const all = [...before, ...after];
      assertIds(all);
      assert.equal(all[0].event, "run_started");
      assert.equal(all.at(-1)!.event, "run_finished");
      assert.equal(JSON.parse(all.at(-1)!.data).status, "completed");
      assert.equal(textOf(all), WORDS, `the whole text, once (dropped after frame ${cut})`);
    });

    await tt.step("a run that ended: its rest from a cursor, 204 at its end", async () => {
      const started = await t.fetch("/v1/runs/start", { method: "POST", json: longRun() });
      const { run_id } = await started.json();
      // Everything from the start, as a client that lost the whole stream asks for it.
      const whole = await readSse(await t.fetch(`/v1/runs/${run_id}/events?after=0`)).all();
      assertIds(whole);
      assert.equal(textOf(whole), WORDS);
      const ended = await eventually(async () => {
        const run = await (await t.fetch(`/v1/runs/${run_id}`)).json();
        return run.status === "completed" ? run : undefined;
      }, { what: "the run to complete" });
      assert.equal(ended.status, "completed");
      const mid = whole[Math.floor(whole.length / 2)];
      const rest = await readSse(await t.fetch(`/v1/runs/${run_id}/events?after=${mid.id}`)).all();
      assert.deepEqual(
        rest,
        whole.slice(whole.indexOf(mid) + 1).map((e, i) => i === 0 ? { ...e, retry: 1000 } : e),
      );
      const end = await t.fetch(`/v1/runs/${run_id}/events`, {
        headers: { "last-event-id": whole.at(-1)!.id! },
      });
      assert.equal(end.status, 204, "nothing after the last frame: EventSource stops");
      // Without a cursor, the spec's rule stands: the run is not running.
      await assertError(
        await t.fetch(`/v1/runs/${run_id}/events`),
        409004,
      );
      await assertError(
        await t.fetch(`/v1/runs/${run_id}/events`, { headers: { "last-event-id": "x" } }),
        422000,
        { field: "Last-Event-ID", rule: "cursor" },
      );
      await assertError(
        await t.fetch(`/v1/runs/${run_id}/events?after=-1`),
        422000,
        {
          field: "after",
          rule: "cursor",
        },
      );
      await assertError(
        await t.fetch(`/v1/runs/nope/events?after=1`),
        404002,
      );
    });
  });
}

Deno.test("a cursor older than the retention window is 410001", async () => {
  await using t = await startTestServer({ manifest: { runtime: { pubsub: { retention: 200 } } } });
  const started = await t.fetch("/v1/runs/start", {
    method: "POST",
    json: { messages: [{ role: "user", content: [{ type: "text", value: "short" }] }] },
  });
  const { run_id } = await started.json();
  await eventually(async () => {
    const res = await t.fetch(`/v1/runs/${run_id}/events?after=1`);
    await res.body?.cancel();
    return res.status === 410;
  }, { what: "the history to expire" });
  await assertError(
    await t.fetch(`/v1/runs/${run_id}/events?after=1`),
    410001,
  );
});

Deno.test({
  name: "EventSource resumes by itself through a connection that breaks mid-stream",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using t = await startTestServer();
  await using proxy = breakingProxy(new URL(t.url), 6_000);
  const started = await t.fetch("/v1/runs/start", { method: "POST", json: longRun() });
  const { run_id } = await started.json();
  const source = new EventSource(
    `http://127.0.0.1:${proxy.port}/v1/runs/${run_id}/events?after=0`,
  );
  const received: { id: string; kind: string; data: Record<string, unknown> }[] = [];
  const done = Promise.withResolvers<void>();
  for (const kind of ["run_started", "messages_snapshot", "text_message_content", "run_finished"]) {
    source.addEventListener(kind, (e) => {
      const message = e as MessageEvent<string>;
      received.push({ id: message.lastEventId, kind, data: JSON.parse(message.data) });
      if (kind === "run_finished") {
        source.close();
        done.resolve();
      }
    });
  }
  await done.promise;
  assert.ok(proxy.connections >= 2, `reconnected (${proxy.connections} connections)`);
  const text = received.filter((e) => e.kind === "text_message_content")
    .map((e) => e.data.delta).join("");
  assert.equal(text, WORDS);
  const ids = received.map((e) => Number(e.id));
  assert.equal(new Set(ids).size, ids.length, "no frame twice");
});

/** A run of `status` on a memory pub/sub, and what `openRunStream` needs to stream it. */
function streamRig(status: Run["status"]) {
  const pubsub = createMemoryPubSub({
    capacity: 16,
    prefix: uniqueName("rig"),
    history: HISTORY_DEFAULTS,
  });
  const runId = uniqueName("run");
  const run = { run_id: runId, session_id: "s", status } as unknown as Run;
  const deps = {
    store: { getRun: () => Promise.resolve(run) },
    pubsub,
    watchMs: 1_000,
    replay: new ReplayBudget(64 * 2 ** 20, 1_000),
    historyHere: () => true,
  };
  return { pubsub, runId, channel: runChannel(runId), deps };
}

/** The `run_finished` event of a completed run. */
function completed(runId: string) {
  return makeEvent("run_finished", {
    session_id: "s",
    run_id: runId,
    status: "completed",
    interrupt_payload: null,
    result: null,
  });
}

Deno.test("a stream from the first event of a run with nothing kept yet hears every event", async () => {
  const { pubsub, runId, channel, deps } = streamRig("running");
  try {
    // A client that has events 1 and 2 (from its attached stream) re-attaches before the owner's
    // first append reached the history; its encoder rebuilds from the first event.
    const stream = await openRunStream(deps, "t", runId, { after: 2, fromFirst: true });
    const events = [
      makeEvent("run_started", { session_id: "s", run_id: runId } as never),
      makeEvent("step_started", { step: 1, step_name: "model" } as never),
      makeEvent("step_finished", { step: 1, step_name: "model" } as never),
      completed(runId),
    ];
    const entries = events.map((event, i) => ({
      seq: i + 1,
      message: JSON.stringify({ seq: i + 1, event }),
    }));
    await pubsub.append(channel, entries, `[${entries.map((e) => e.message).join(",")}]`);
    const items = await Array.fromAsync(stream);
    assert.deepEqual(items.map((i) => "seq" in i && i.seq), [1, 2, 3, 4]);
  } finally {
    await pubsub.close();
  }
});

/**
 * A TCP proxy on a free loopback port to `target`: each client's connection gets one of its own
 * to `target`, and `pass` moves the bytes between the two (`index` counts connections from 0).
 */
function tcpProxy(
  target: Deno.ConnectOptions,
  pass: (client: Deno.Conn, upstream: Deno.Conn, index: number) => void,
) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let connections = 0;
  const open: Deno.Conn[] = [];
  const serving = (async () => {
    for await (const client of listener) {
      const upstream = await Deno.connect(target);
      open.push(client, upstream);
      pass(client, upstream, connections++);
    }
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    get connections() {
      return connections;
    },
    async [Symbol.asyncDispose]() {
      listener.close();
      for (const conn of open) {
        try {
          conn.close();
        } catch { /* closed already */ }
      }
      await serving.catch(() => {});
    },
  };
}

/** Copies `from` to `to` until `limit` bytes passed or `from` ended, then closes both. */
async function pump(from: Deno.Conn, to: Deno.Conn, limit: number): Promise<void> {
  const buffer = new Uint8Array(16 * 1024);
  let sent = 0;
  try {
    for (;;) {
      const n = await from.read(buffer);
      if (n === null) break;
      const take = Math.min(n, limit - sent);
      await to.write(buffer.subarray(0, take));
      sent += take;
      if (sent >= limit) break;
    }
  } catch { /* closed */ }
  for (const conn of [from, to]) {
    try {
      conn.close();
    } catch { /* closed already */ }
  }
}

/**
 * A TCP proxy to `target` whose first connection breaks after `bytes` bytes of the answer (both
 * sides closed); later connections pass whole.
 */
function breakingProxy(target: URL, bytes: number) {
  return tcpProxy(
    { hostname: target.hostname, port: Number(target.port) },
    (client, upstream, i) => {
      void pump(client, upstream, Infinity);
      void pump(upstream, client, i === 0 ? bytes : Infinity);
    },
  );
}

Deno.test("on_disconnect: the manifest's default, the request's choice, the spec's rule", async () => {
  await using t = await startTestServer({
    // No re-attach grace: the spec's rule at once.
    manifest: {
      http_server: { on_disconnect: "continue" },
      runtime: { attached: { reattach_grace: 0 } },
    },
  });
  /** Starts an attached run, drops its stream after the first token; the run's final status. */
  const dropped = async (extra: Record<string, unknown>) => {
    const res = await t.fetch("/v1/runs", { method: "POST", json: longRun(extra) });
    const runId = res.headers.get("x-run-id")!;
    const stream = readSse(res);
    await stream.until("text_message_content");
    await stream.cancel();
    return await eventually(async () => {
      const run = await (await t.fetch(`/v1/runs/${runId}`)).json();
      return run.status === "running" ? undefined : run.status as string;
    }, { what: "the run to end" });
  };
  assert.equal(await dropped({}), "completed", "the manifest says continue");
  assert.equal(await dropped({ on_disconnect: "cancel" }), "cancelled", "the request says cancel");
  await assertError(
    await t.fetch("/v1/runs", { method: "POST", json: longRun({ on_disconnect: "later" }) }),
    422000,
    { field: "on_disconnect", rule: "enum" },
  );
});

Deno.test("streams resuming a run at once decode its large events once", async () => {
  const { pubsub, runId, channel, deps } = streamRig("completed");
  const snapshot = makeEvent("text_message_content", {
    message_id: "m",
    delta: "z".repeat(200_000),
  } as never);
  for (const [seq, event] of [[1, snapshot], [2, completed(runId)]] as const) {
    const message = JSON.stringify({ seq, event });
    await pubsub.append(channel, [{ seq, message }], message);
  }
  await pubsub.seal(channel);
  const parse = JSON.parse;
  const parsed: number[] = [];
  JSON.parse = ((text: string, ...rest: []) => {
    parsed.push(text.length);
    return parse(text, ...rest);
  }) as typeof parse;
  try {
    const opened = await Promise.all(
      [1, 2, 3].map(() => openRunStream(deps, "t", runId, { after: 0 })),
    );
    const read = await Promise.all(opened.map((s) => Array.fromAsync(s)));
    for (const items of read) {
      assert.deepEqual(items.map((i) => "seq" in i && i.seq), [1, 2]);
      // The very same event: one decoding, and its JSON (primeEncoding) shared with it.
      assert.equal(items[0], read[0][0]);
    }
    assert.equal(parsed.filter((n) => n > 200_000).length, 1, "the large message parsed once");
    assert.equal(parsed.filter((n) => n < 1_000).length, 3, "small ones per stream");
  } finally {
    JSON.parse = parse;
    await pubsub.close();
  }
});

Deno.test("a queued run's stream (unstarted) gets the events sent before it subscribed", async () => {
  const { pubsub, runId, channel, deps } = streamRig("queued");
  const send = async (seq: number, event: ReturnType<typeof makeEvent>) => {
    const message = JSON.stringify({ seq, event });
    await pubsub.append(channel, [{ seq, message }], message);
  };
  try {
    // Another replica took the run and sent its first event before the stream subscribed.
    await send(1, makeEvent("run_started", { session_id: "s", run_id: runId } as never));
    const stream = await openRunStream(deps, "t", runId, { unstarted: true });
    await send(2, completed(runId));
    const items = await Array.fromAsync(stream);
    assert.deepEqual(items.map((i) => "seq" in i && i.seq), [1, 2]);
  } finally {
    await pubsub.close();
  }
});

/**
 * A TCP proxy to `target` that holds every chunk its clients send for `ms` before passing it on,
 * in order; the answers come back at once.
 */
function delayingProxy(target: Deno.ConnectOptions, ms: number) {
  return tcpProxy(target, (client, upstream) => {
    void held(client, upstream, ms);
    void upstream.readable.pipeTo(client.writable).catch(() => {});
  });
}

/** Copies `from` to `to`, each chunk `ms` after it arrived, in order. */
async function held(from: Deno.Conn, to: Deno.Conn, ms: number): Promise<void> {
  const queue: { due: number; chunk: Uint8Array }[] = [];
  let wake = () => {};
  let ended = false;
  void (async () => {
    try {
      for await (const chunk of from.readable) {
        queue.push({ due: Date.now() + ms, chunk });
        wake();
      }
    } catch { /* closed */ }
    ended = true;
    wake();
  })();
  const writer = to.writable.getWriter();
  try {
    for (;;) {
      const next = queue.shift();
      if (!next) {
        if (ended) break;
        await new Promise<void>((resolve) => wake = resolve);
        continue;
      }
      const wait = next.due - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      await writer.write(next.chunk);
    }
    await writer.close();
  } catch { /* closed */ }
}

Deno.test({
  name: "a run the store says ended can be replayed on another replica, however late its " +
    "events reach Redis",
  ignore: !(testPostgresUrl && testRedisUrl),
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const schema = uniqueName("agentd_resume");
  await using cleanup = new AsyncDisposableStack();
  cleanup.defer(() => dropSchema(schema));
  const redis = new URL(testRedisUrl!);
  // Replica A's commands reach Redis 300 ms late: its run ends long before its events are kept.
  await using proxy = delayingProxy(
    { hostname: redis.hostname, port: Number(redis.port || 6379) },
    300,
  );
  const late = new URL(testRedisUrl!);
  late.hostname = "127.0.0.1";
  late.port = String(proxy.port);
  const prefix = uniqueName("resume");
  const replica = (url: string, id: string) =>
    startTestServer({
      store: "postgres",
      manifest: { runtime: { pubsub: { kind: "redis", url, prefix } } },
      shared: { schema },
      replicaId: id,
    });
  await using a = await replica(late.href, "replica-a");
  await using b = await replica(testRedisUrl!, "replica-b");

  const started = await a.fetch("/v1/runs/start", {
    method: "POST",
    json: { messages: [userText("one two three")] },
  });
  assert.equal(started.status, 202);
  const { run_id } = await started.json();
  await eventually(async () => {
    const run = await (await b.fetch(`/v1/runs/${run_id}`)).json();
    return run.status === "completed" ? run : undefined;
  }, { what: "the run to complete" });
  // The store says it ended: its history is there to replay from the start.
  const res = await b.fetch(`/v1/runs/${run_id}/events?after=0`);
  assert.equal(res.status, 200, await res.clone().text());
  const events = await readSse(res).all();
  assert.equal(events[0].event, "run_started");
  assert.equal(events.at(-1)!.event, "run_finished");
  assert.equal(JSON.parse(events.at(-1)!.data).status, "completed");
  assert.equal(textOf(events), "one two three");
});
