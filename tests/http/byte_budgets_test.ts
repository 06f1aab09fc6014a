/**
 * Every answer and every stream is bounded in bytes (issue 27, item 2), against a server process
 * whose RSS is measured: a session of 40 messages of 1 MB each (all under the body limit) is
 * listed and its checkpoints paged without a 500 or a page of `per_page` times their size; a
 * message over `runtime.max_message_bytes` is refused 413003 on every input (native, AG-UI, A2A)
 * and a write over the session cap 413002; re-attach
 * streams that never read are dropped as `slow_consumer` once their unread bytes pass the budget,
 * and the memory they held comes back. RSS bounds are generous (the point is "not hundreds of MB
 * per request"); the longest concurrent `/healthz` wait is printed, not asserted.
 */
import assert from "node:assert/strict";
import { HttpAgent } from "@ag-ui/client";
import {
  dropSchema,
  eventually,
  probeHealth,
  type ServerProcess,
  slowTest,
  startServerProcess,
  startTestServer,
  storeKinds,
  testPostgresUrl,
  uniqueName,
} from "../_kit/mod.ts";
import { clientFor, message, request, restError, text, transports } from "../protocols/a2a/sdk.ts";

const MiB = 1024 * 1024;
/** One 1 MB word: the echo model answers it in one delta, so a run writes 2 MB in two messages. */
const BIG = "x".repeat(1_000_000);
const TURNS = 20;

async function json(p: ServerProcess, path: string, init?: RequestInit) {
  const res = await fetch(`${p.url}${path}`, init);
  const text = await res.text();
  return { status: res.status, bytes: text.length, body: text ? JSON.parse(text) : null };
}

/** Starts a detached run of `text` in `session` and waits for it to complete. */
async function turn(p: ServerProcess, session: string, text: string): Promise<string> {
  const started = await json(p, "/v1/runs/start", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      session_id: session,
      messages: [{ role: "user", content: [{ type: "text", value: text }] }],
    }),
  });
  assert.equal(started.status, 202, JSON.stringify(started.body));
  const runId = started.body.run_id as string;
  await eventually(async () => (await json(p, `/v1/runs/${runId}`)).body.status === "completed", {
    timeout: 60_000,
    what: `run ${runId} to complete`,
  });
  return runId;
}

/** Sends a GET on a raw connection and never reads the answer (a silent reader). */
async function silentGet(p: ServerProcess, path: string): Promise<Deno.TcpConn> {
  const { hostname, port } = new URL(p.url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  await conn.write(new TextEncoder().encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
  return conn;
}

slowTest("byte budgets: a 40 MB conversation, paged and streamed to silent readers", async (t) => {
  await using p = await startServerProcess({
    manifest: {
      agent: { name: "bytes", model: { provider: "echo" } },
      // Dropped within a second here (10 s by default): the test waits for it.
      runtime: { attached: { drain_timeout: 1_000 } },
    },
  });
  let lastRun = "";
  for (let i = 0; i < TURNS; i++) lastRun = await turn(p, "big", BIG);
  const baseline = await p.rss();
  console.log(`RSS with a ${TURNS * 2} MB session: ${(baseline / MiB).toFixed(0)} MiB`);

  await t.step("checkpoint pages are cut by bytes, with next_page", async () => {
    const probe = probeHealth(p.url);
    for (const perPage of [100, 10]) {
      const page = await json(p, `/v1/sessions/big/checkpoints?per_page=${perPage}`);
      assert.equal(page.status, 200, `per_page=${perPage}`);
      assert.ok(page.body.items.length < page.body.count, "a short page");
      assert.ok(page.body.next_page, "that goes on");
      // At least one checkpoint, whatever its size; past 4 MiB no further one.
      const first = JSON.stringify(page.body.items[0]).length;
      assert.ok(page.bytes <= 4 * MiB + first + 64 * 1024, `${page.bytes} bytes`);
      const next = await json(
        p,
        `/v1/sessions/big/checkpoints?per_page=${perPage}&page=${page.body.next_page}`,
      );
      assert.equal(next.status, 200);
      assert.ok(next.body.items.length >= 1);
      assert.ok(
        next.body.items[0].checkpoint_id !==
          page.body.items.at(-1).checkpoint_id,
        "nothing repeated at the cut",
      );
    }
    // Four at once: no 500, no stall of the size of the answers.
    const four = await Promise.all(
      [0, 1, 2, 3].map(() => json(p, "/v1/sessions/big/checkpoints?per_page=100")),
    );
    assert.deepEqual(four.map((r) => r.status), [200, 200, 200, 200]);
    const rss = await p.rss();
    const { longestMs } = await probe.stop();
    console.log(
      `checkpoint pages: RSS ${(rss / MiB).toFixed(0)} MiB, longest /healthz wait ${longestMs} ms`,
    );
    // Generous (GC runs when it likes): the one page at per_page=10 alone added 540 MB,
    // and four at per_page=100 answered 500.
    assert.ok(rss < baseline + 400 * MiB, `RSS ${rss / MiB} MiB after the pages`);
  });

  await t.step("message pages are cut by bytes, with next_page", async () => {
    const page = await json(p, "/v1/sessions/big/messages?per_page=100");
    assert.equal(page.status, 200);
    assert.equal(page.body.count, TURNS * 2);
    assert.ok(page.body.items.length <= 5, `${page.body.items.length} messages of 1 MB`);
    assert.ok(page.bytes <= 4 * MiB + 1_100_000, `${page.bytes} bytes`);
    // Following next_page gives every message once.
    let seen = page.body.items.length;
    let next = page.body.next_page;
    while (next) {
      const more = await json(p, `/v1/sessions/big/messages?per_page=100&page=${next}`);
      seen += more.body.items.length;
      next = more.body.next_page;
    }
    assert.equal(seen, TURNS * 2);
  });

  await t.step("silent re-attach readers are dropped as slow_consumer", async () => {
    const probe = probeHealth(p.url);
    const drops = () => p.logs.filter((l) => l.includes("stream dropped")).length;
    const before = drops();
    const conns = await Promise.all(
      Array.from({ length: 20 }, () => silentGet(p, `/v1/runs/${lastRun}/events?after=0`)),
    );
    try {
      await eventually(() => drops() - before === 20, {
        timeout: 60_000,
        what: "the 20 silent streams to be dropped",
      });
      // Their connections are closed: what they held is not kept for them.
      const rss = await eventually(async () => {
        const now = await p.rss();
        return now < baseline + 400 * MiB ? now : undefined;
      }, { timeout: 30_000, what: "the RSS to come back" });
      const { longestMs } = await probe.stop();
      console.log(
        `20 silent re-attaches: RSS ${(rss / MiB).toFixed(0)} MiB after their drop, ` +
          `longest /healthz wait ${longestMs} ms`,
      );
    } finally {
      for (const c of conns) c.close();
    }
    // A reader that reads gets the whole stream.
    const res = await fetch(`${p.url}/v1/runs/${lastRun}/events?after=0`);
    const text = await res.text();
    assert.match(text, /run_finished/);
  });

  await t.step("a write past the session cap is refused 413002", async () => {
    await using small = await startServerProcess({
      manifest: {
        agent: { name: "bytes", model: { provider: "echo" } },
        runtime: { max_session_bytes: 8 * MiB },
      },
    });
    const post = (path: string, body: unknown) =>
      json(small, path, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const message = { role: "user", content: [{ type: "text", value: BIG }] };
    assert.equal((await post("/v1/sessions", { session_id: "s" })).status, 201);
    // Eight 1 MB messages fit 8 MiB; the ninth would not.
    for (let i = 0; i < 8; i++) {
      assert.equal((await post("/v1/sessions/s/messages", message)).status, 201, `message ${i}`);
    }
    const refused = await post("/v1/sessions/s/messages", message);
    assert.equal(refused.status, 413);
    assert.equal(refused.body.code, 413002);
    assert.match(refused.body.message, /max_session_bytes/);
    // A run's input meets the same cap, before anything is written.
    const run = await post("/v1/runs/start", { session_id: "s", messages: [message] });
    assert.equal(run.status, 413);
    assert.equal(run.body.code, 413002);
    assert.equal((await json(small, "/v1/sessions/s/messages")).body.count, 8, "nothing written");
    assert.equal((await json(small, "/v1/sessions/s/runs")).body.count, 0, "no run");
  });
});

Deno.test("one message past runtime.max_message_bytes is refused 413003 on every input", async (t) => {
  // A body limit well above the message cap: the message cap is a setting of its own.
  await using s = await startTestServer({
    manifest: {
      agent: { name: "message-cap", model: { provider: "echo" } },
      runtime: { max_message_bytes: 64 * 1024 },
      http_server: { max_body_bytes: 4 * MiB, protocol: { ag_ui: {}, a2a: {} } },
    },
  });
  const big = "y".repeat(100_000);
  const fits = "y".repeat(60_000);
  const native = (value: string) => ({ role: "user", content: [{ type: "text", value }] });
  const refused = async (res: Response) => {
    const body = await res.json();
    assert.equal(res.status, 413, JSON.stringify(body));
    return body;
  };

  await t.step("native: a run's input and POST .../messages", async () => {
    const run = await refused(
      await s.fetch("/v1/runs/start", { method: "POST", json: { messages: [native(big)] } }),
    );
    assert.equal(run.code, 413003);
    assert.match(run.message, /max_message_bytes/);
    // Two messages that each fit pass, though together they are over the cap.
    const ok = await s.fetch("/v1/runs/start", {
      method: "POST",
      json: { session_id: "m", messages: [native(fits), native(fits)] },
    });
    const { run_id } = await ok.json();
    assert.equal(ok.status, 202);
    await eventually(
      async () => (await (await s.fetch(`/v1/runs/${run_id}`)).json()).status === "completed",
      { what: "the run to end" },
    );
    const message = await refused(
      await s.fetch("/v1/sessions/m/messages", { method: "POST", json: native(big) }),
    );
    assert.equal(message.code, 413003);
    // Two inputs and the answer; nothing of the refused write.
    assert.equal((await (await s.fetch("/v1/sessions/m/messages")).json()).count, 3);
  });

  await t.step("AG-UI, through @ag-ui/client", async () => {
    const agent = new HttpAgent({ url: `${s.url}/ag-ui/run` });
    agent.addMessage({ id: crypto.randomUUID(), role: "user", content: big });
    const err = await agent.runAgent().then(
      () => assert.fail("expected a refusal"),
      (e: Error & { status?: number; payload?: { code?: number } }) => e,
    );
    assert.equal(err.status, 413);
    assert.equal(err.payload?.code, 413003);
    assert.equal((await s.fetch(`/v1/sessions/${agent.threadId}`)).status, 404, "nothing written");
  });

  await t.step("A2A, through @a2a-js/sdk on both bindings", async () => {
    for (const transport of transports) {
      const client = await clientFor(s, transport);
      const msg = message([text(big)]);
      await assert.rejects(client.sendMessage(request(msg)), /413003|too large|max_message_bytes/);
      assert.equal((await s.fetch(`/v1/runs/${msg.messageId}`)).status, 404);
    }
    const raw = await s.fetch("/a2a/message:send", {
      method: "POST",
      json: { message: { messageId: "m1", role: "ROLE_USER", parts: [{ text: big }] } },
    });
    const error = await restError(raw, 413, "AGENTD_413003");
    assert.match(error.message, /max_message_bytes/);
  });
});

for (const store of storeKinds) {
  Deno.test(`a run's own output stops at runtime.max_session_bytes (${store})`, async () => {
    await using s = await startTestServer({
      store,
      manifest: {
        agent: { name: "session-cap", model: { provider: "echo" } },
        runtime: { max_session_bytes: MiB },
      },
    });
    const session = crypto.randomUUID();
    /** Runs `value` in the session (the echo model answers it back) and returns the run. */
    const runOf = async (value: string) => {
      const res = await s.fetch("/v1/runs/start", {
        method: "POST",
        json: {
          session_id: session,
          messages: [{ role: "user", content: [{ type: "text", value }] }],
        },
      });
      assert.equal(res.status, 202, await res.clone().text());
      const { run_id } = await res.json();
      return await eventually(async () => {
        const run = await (await s.fetch(`/v1/runs/${run_id}`)).json();
        return run.status === "running" || run.status === "queued" ? undefined : run;
      }, { what: `run ${run_id} to end` });
    };
    const messages = async () =>
      (await (await s.fetch(`/v1/sessions/${session}/messages?per_page=100`)).json()).items;
    // 400 KB in and 400 KB back: ~800 KB of the 1 MiB.
    assert.equal((await runOf("a".repeat(400_000))).status, "completed");
    // 150 KB more fits as input (the client write is checked), its echo would not.
    const full = await runOf("b".repeat(150_000));
    assert.equal(full.status, "failed");
    assert.equal(full.error.code, "session_too_large");
    assert.match(full.error.message, /max_session_bytes/);
    const kept = await messages();
    assert.deepEqual(kept.map((m: { role: string }) => m.role), ["user", "assistant", "user"]);
    const bytes = kept.reduce((n: number, m: unknown) => n + JSON.stringify(m).length, 0);
    console.log(`session after the refused answer: ${bytes} bytes of ${MiB}`);
    assert.ok(bytes <= MiB, `${bytes} bytes`);
    // The next client write meets the cap as before.
    const refused = await s.fetch("/v1/runs/start", {
      method: "POST",
      json: {
        session_id: session,
        messages: [{ role: "user", content: [{ type: "text", value: "c".repeat(200_000) }] }],
      },
    });
    assert.equal(refused.status, 413);
    assert.equal((await refused.json()).code, 413002);
  });
}

slowTest({
  name: "byte budgets under deno serve: silent re-attach readers are dropped too",
  ignore: !testPostgresUrl,
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const schema = uniqueName("unread");
  try {
    await using p = await startServerProcess({
      serverless: true,
      name: "serverless",
      manifest: {
        agent: { name: "bytes", model: { provider: "echo" } },
        runtime: {
          storage: { url: testPostgresUrl, schema },
          attached: { drain_timeout: 1_000, max_unread_bytes: MiB },
        },
      },
    });
    const turns = 8;
    let lastRun = "";
    for (let i = 0; i < turns; i++) lastRun = await turn(p, "big", BIG);
    const baseline = await p.rss();
    const probe = probeHealth(p.url);
    const drops = () => p.logs.filter((l) => l.includes("stream dropped")).length;
    const conns = await Promise.all(
      Array.from({ length: 20 }, () => silentGet(p, `/v1/runs/${lastRun}/events?after=0`)),
    );
    try {
      await eventually(() => drops() === 20, {
        timeout: 60_000,
        what: "the 20 silent streams to be dropped",
      });
      const peak = await p.rss();
      // Their connections are closed by the server: reading what is left ends.
      for (const conn of conns) {
        const buf = new Uint8Array(1024 * 1024);
        while (true) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
        }
      }
      const rss = await eventually(async () => {
        const now = await p.rss();
        return now < baseline + 200 * MiB ? now : undefined;
      }, { timeout: 30_000, what: "the RSS to come back" });
      const { longestMs } = await probe.stop();
      console.log(
        `deno serve, ${turns * 2} MB session, 20 silent re-attaches: RSS ${
          (baseline / MiB).toFixed(0)
        } MiB before, ${(peak / MiB).toFixed(0)} at the drop, ${(rss / MiB).toFixed(0)} after; ` +
          `longest /healthz wait ${longestMs} ms`,
      );
    } finally {
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    }
    // A reader that reads gets the whole stream.
    const text = await (await fetch(`${p.url}/v1/runs/${lastRun}/events?after=0`)).text();
    assert.match(text, /run_finished/);
  } finally {
    await dropSchema(schema);
  }
});

slowTest("byte budgets: streams resuming different large runs share max_replay_bytes", async () => {
  const figures: string[] = [];
  for (const budget of [20 * MiB, 1024 * MiB]) {
    await using p = await startServerProcess({
      manifest: {
        agent: { name: "bytes", model: { provider: "echo" } },
        http_server: { max_body_bytes: 32 * MiB },
        runtime: {
          max_message_bytes: 32 * MiB,
          pubsub: { retention_max_bytes: 512 * MiB },
          attached: { drain_timeout: 3_000, max_replay_bytes: budget },
        },
      },
    });
    // Five runs, each with two 8 MB events (the snapshot of its input, the echo of it).
    const runs: string[] = [];
    for (let i = 0; i < 5; i++) runs.push(await turn(p, `s${i}`, String(i).repeat(8_000_000)));
    const baseline = await p.rss();
    const probe = probeHealth(p.url);
    const conns = await Promise.all(runs.map((r) => silentGet(p, `/v1/runs/${r}/events?after=0`)));
    try {
      // Each answer's status line (a refusal comes within drain_timeout); the rest stays unread.
      const statuses = await Promise.all(conns.map(async (conn) => {
        const head = new Uint8Array(256);
        const n = await conn.read(head);
        return Number(/^HTTP\/1\.1 (\d+)/.exec(new TextDecoder().decode(head.subarray(0, n!)))![1]);
      }));
      const rss = await p.rss();
      const { longestMs } = await probe.stop();
      const served = statuses.filter((s) => s === 200).length;
      assert.equal(served + statuses.filter((s) => s === 503).length, 5, String(statuses));
      if (budget === 20 * MiB) {
        // One run's 16 MB fit; the others waited for it, then were refused 503004.
        assert.equal(served, 1, String(statuses));
      } else {
        assert.equal(served, 5, String(statuses));
      }
      figures.push(
        `max_replay_bytes ${budget / MiB} MiB: ${served} of 5 silent resumes served, RSS ${
          (baseline / MiB).toFixed(0)
        } -> ${(rss / MiB).toFixed(0)} MiB, longest /healthz wait ${longestMs} ms`,
      );
    } finally {
      for (const c of conns) c.close();
    }
  }
  console.log(figures.join("\n"));
});
