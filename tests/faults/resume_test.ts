/**
 * Durable runs under replica faults (issue 23): two replicas (`main.ts serve` processes) on a
 * PostgreSQL and a Redis of the suite's own (services.ts, free ports, never the shared ones).
 *
 * - SIGKILL during a tool step: the other replica resumes the run from its last checkpoint; an
 *   idempotent tool in flight runs again once, a non-idempotent one gets the error result
 *   "interrupted: it may or may not have run"; the run completes with exactly one answer.
 * - SIGSTOP past the lease, the other replica takes over, SIGCONT: nothing the paused replica
 *   writes lands (asserted in the store), the run ends once.
 * - SIGTERM with a short grace: the run is handed over and completes on the other replica, never
 *   `interrupted`, though that replica allows one attempt only (a hand-over is no lost attempt).
 * - SQLite (one process): SIGKILL, then a new process on the same file completes the run.
 *
 * (SIGKILL during a model step, with a client re-attached by cursor: reattach_test.ts.)
 */
import assert from "node:assert/strict";
import {
  eventually,
  pacedModel,
  readSse,
  slowTest,
  startServerProcess,
  tempDir,
} from "../_kit/mod.ts";
import { startReplicas } from "./replicas.ts";
import { connect, faultServices, startPostgres, startRedis } from "./services.ts";

const enabled = faultServices("the resume fault test");

const LEASE = 1_500;

/** A tool that says it started (a live `custom` event), then works for `ms`. */
const slowTool = (ms: number) =>
  `export default async function (args, ctx) {
  ctx.emit("started", { n: args.n });
  await new Promise((resolve) => setTimeout(resolve, ${ms}));
  return { done: args.n };
}
`;

slowTest({
  name: "faults: runs outlive SIGKILL, SIGSTOP and SIGTERM of their replica",
  ignore: !enabled,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (tt) => {
  await using pg = await startPostgres();
  await using redis = await startRedis();
  await using dir = await tempDir("agentd_resume_");
  // A allows one attempt: it takes over B's run at B's SIGTERM (B's runs are never lost).
  const manifest = (id: string) => ({
    agent: { name: "resume", model: { provider: "echo" } },
    tool: {
      once: { kind: "javascript", module: "tools/slow.js", timeout: 20_000 },
      again: {
        kind: "javascript",
        module: "tools/slow.js",
        timeout: 20_000,
        idempotent: true,
      },
    },
    runtime: {
      storage: { url: pg.url, schema: "resume", timeout: 2_000 },
      pubsub: { kind: "redis", url: redis.url },
      replica: {
        id,
        heartbeat_interval: 200,
        lease: LEASE,
        poll_interval: 100,
        shutdown_grace: 300,
      },
      runs: { max_attempts: id === "a" ? 1 : 3 },
    },
    http_server: {},
  });
  await dir.write({
    "tools/slow.js": slowTool(4_000),
    "a.json": JSON.stringify(manifest("a")),
    "b.json": JSON.stringify(manifest("b")),
  });
  await using replicas = await startReplicas((id) =>
    startServerProcess({ manifest: `${dir.path}/${id}.json`, name: `replica ${id}` })
  );
  await using sql = connect(pg.url);
  const A = () => replicas.url("a");
  const B = () => replicas.url("b");

  /**
   * Starts a detached run on A (or `on`) and follows it on B (or `watchOn`) from its start;
   * `body` adds fields to its request.
   */
  const startOnA = async (
    run_id: string,
    text: string,
    { delayMs = 0, on = A, watchOn = B, body = {} } = {},
  ) => {
    const res = await fetch(`${on()}/v1/runs/start`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        ...body,
        run_id,
        model: pacedModel(delayMs),
        messages: [{ role: "user", content: [{ type: "text", value: text }] }],
      }),
    });
    assert.equal(res.status, 202, `start ${run_id}: ${res.status}`);
    const { session_id } = await res.json();
    const watch = readSse(
      await fetch(`${watchOn()}/v1/runs/${run_id}/events`, { headers: { "last-event-id": "0" } }),
    );
    return { session_id, watch };
  };
  const record = async (runId: string, at = B) => (await fetch(`${at()}/v1/runs/${runId}`)).json();
  const finished = (runId: string, at = B) =>
    eventually(async () => {
      const run = await record(runId, at);
      return run.status !== "running" && run;
    }, { timeout: 30_000, interval: 100, what: `run ${runId} to end` });
  const conversation = async (session: string) =>
    (await sql`SELECT role, content, run_id FROM resume.messages
      WHERE session_id = ${session} AND removed_clock IS NULL ORDER BY pos`)
      .map((m) => ({ role: m.role as string, content: m.content as unknown }));
  /** The tool message's result value in a stored conversation. */
  const toolResult = (messages: { role: string; content: unknown }[]) =>
    JSON.stringify(messages.find((m) => m.role === "tool")?.content);

  for (const [tool, idempotent] of [["again", true], ["once", false]] as const) {
    await tt.step(
      `SIGKILL during ${idempotent ? "an " : "a non-"}idempotent tool call`,
      async () => {
        const run_id = `tool-${tool}`;
        const { session_id, watch } = await startOnA(run_id, `/call ${tool} {"n":1}`);
        await watch.until((e) => e.event === "custom");
        replicas.a.kill("SIGKILL");
        const killed = performance.now();
        const events = await watch.all();
        const run = await finished(run_id);
        const ms = Math.round(performance.now() - killed);
        console.log(`  ${tool}: completed on B ${ms} ms after SIGKILL (lease ${LEASE} ms)`);
        assert.equal(run.status, "completed", JSON.stringify(run));
        assert.equal(run.attempt, 2);
        // The lost attempt's model step (the tool call) spent its tokens: it counts.
        assert.equal(run.model_steps.length, 2, JSON.stringify(run.model_steps));
        const started = events.filter((e) => e.event === "custom").length;
        const messages = await conversation(session_id);
        assert.deepEqual(messages.map((m) => m.role), ["user", "assistant", "tool", "assistant"]);
        if (idempotent) {
          assert.equal(started, 2, "run again once by the new attempt");
          assert.match(toolResult(messages), /"done":1/);
        } else {
          assert.equal(started, 1, "never run again");
          assert.match(toolResult(messages), /interrupted: it may or may not have run/);
        }
        assert.ok(events.some((e) => e.event === "run_resumed"));
        assert.equal(JSON.parse(events.at(-1)!.data).status, "completed");
        await replicas.restart("a");
      },
    );
  }

  await tt.step(
    "SIGKILL with a client tool call pending: it waits for the client again",
    async () => {
      // The model calls a client tool, then the slow server tool, in one step: the client call is
      // pending (in memory) while the server tool runs when A is killed.
      const run_id = "client-pending";
      const ask = { name: "ask", description: "asks the user", parameters: { type: "object" } };
      const { session_id, watch } = await startOnA(run_id, `/call ask {}\n/call once {"n":2}`, {
        body: { tools: [ask] },
      });
      await watch.until((e) => e.event === "custom");
      replicas.a.kill("SIGKILL");
      const events = await watch.all();
      const run = await finished(run_id);
      assert.equal(run.status, "interrupted", JSON.stringify(run));
      assert.equal(run.attempt, 2);
      const [askCall] = run.interrupt_payload.pending;
      assert.deepEqual(run.interrupt_payload.pending, [
        {
          tool_call_id: askCall.tool_call_id,
          tool_name: "ask",
          arguments: {},
          kind: "client_tool",
        },
      ]);
      // The stream says the same as the store: the run ends waiting for the same call.
      const end = JSON.parse(events.at(-1)!.data);
      assert.deepEqual([end.status, end.interrupt_payload], ["interrupted", run.interrupt_payload]);
      const results = events.filter((e) => e.event === "tool_call_result")
        .map((e) => JSON.parse(e.data));
      assert.equal(results.length, 1, "the server tool's result only");
      assert.notEqual(results[0].tool_call_id, askCall.tool_call_id);
      assert.match(JSON.stringify(results[0].content), /interrupted: it may or may not have run/);
      const [checkpoint] = await sql`SELECT state FROM resume.checkpoints
      WHERE checkpoint_id = ${run.checkpoint_id}`;
      assert.deepEqual(
        (checkpoint.state as { pending_tool_calls: unknown[] }).pending_tool_calls,
        run.interrupt_payload.pending,
      );
      assert.deepEqual((await conversation(session_id)).map((m) => m.role), [
        "user",
        "assistant",
        "tool",
      ]);
      // The client answers it as after any interrupt: the next run completes.
      await replicas.restart("a");
      const next = await fetch(`${B()}/v1/runs`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          session_id,
          tools: [ask],
          messages: [{ role: "user", content: [{ type: "text", value: "there" }] }],
          resume_payload: {
            tool_results: [{ tool_call_id: askCall.tool_call_id, result: "yes" }],
          },
        }),
      });
      assert.equal(next.status, 200, await next.clone().text());
      const last = (await readSse(next).all()).at(-1)!;
      assert.equal(JSON.parse(last.data).status, "completed");
      assert.deepEqual((await conversation(session_id)).map((m) => m.role), [
        "user",
        "assistant",
        "tool",
        "tool",
        "user",
        "assistant",
      ]);
    },
  );

  await tt.step(
    "SIGSTOP past the lease, takeover, SIGCONT: the paused replica writes nothing",
    async () => {
      const run_id = "paused";
      const words = Array.from({ length: 60 }, (_, i) => `p${i}`).join(" ");
      const { session_id, watch } = await startOnA(run_id, words, { delayMs: 50 });
      await watch.until("text_message_content");
      replicas.a.kill("SIGSTOP");
      // B takes the run over; A wakes up while B's attempt still answers: A's model stream goes
      // on, its events are held (its lease is in doubt), its step and outcome are refused.
      await eventually(async () => (await record(run_id)).attempt === 2, {
        timeout: 10_000,
        interval: 50,
        what: "B to take the run over",
      });
      replicas.a.kill("SIGCONT");
      const events = await watch.all();
      const run = await finished(run_id);
      assert.equal(run.status, "completed");
      assert.equal(run.attempt, 2);
      const ids = events.map((e) => Number(e.id));
      assert.deepEqual(ids, ids.map((_, i) => i + 1), "one numbering, no event of A among B's");
      const at = events.findIndex((e) => e.event === "run_resumed");
      const answer = events.slice(at).filter((e) => e.event === "text_message_content")
        .map((e) => JSON.parse(e.data).delta).join("");
      assert.equal(answer, words, "B's answer, nothing of A mixed in");
      await eventually(
        () => replicas.a.logs.some((l) => l.includes("run stopped: another attempt owns it")),
        { timeout: 15_000, what: "replica a to stop the run it lost" },
      );
      // The run's history (Redis) holds nothing of A either: a client re-attaching now, on either
      // replica, from the start, replays exactly what the live client saw.
      for (const at of [A, B]) {
        const replay = await readSse(
          await fetch(`${at()}/v1/runs/${run_id}/events`, { headers: { "last-event-id": "0" } }),
        ).all();
        assert.deepEqual(replay.map((e) => [e.id, e.data]), events.map((e) => [e.id, e.data]));
      }
      const messages = await conversation(session_id);
      assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"], "no message of A");
      assert.equal((messages[1].content as { value: string }[])[0].value, words);
      const checkpoints = await sql`SELECT checkpoint_id FROM resume.checkpoints
        WHERE session_id = ${session_id}`;
      assert.equal(checkpoints.length, 1, "B's one step; no checkpoint of A");
      const [row] = await sql`SELECT status, attempt, result FROM resume.runs
        WHERE run_id = ${run_id}`;
      assert.deepEqual({ ...row }, { status: "completed", attempt: 2, result: run.result });
    },
  );

  await tt.step("SIGTERM with a short grace: handed over, completed on A (1 attempt)", async () => {
    const run_id = "handed";
    const words = Array.from({ length: 40 }, (_, i) => `h${i}`).join(" ");
    const { session_id, watch } = await startOnA(run_id, words, { delayMs: 50, on: B, watchOn: A });
    await watch.until("text_message_content");
    const status = await replicas.b.stop(10_000);
    assert.equal(status.code, 0, "a graceful exit");
    const run = await finished(run_id, A);
    const events = await watch.all();
    assert.equal(run.status, "completed", JSON.stringify(run));
    assert.equal(run.attempt, 2, "A resumed it though it allows 1 attempt");
    assert.ok(!events.some((e) => e.data.includes('"interrupted"')), "never interrupted");
    const messages = await conversation(session_id);
    assert.deepEqual(messages.map((m) => m.role), ["user", "assistant"]);
    assert.equal(
      (messages[1].content as { value: string }[])[0].value,
      words,
      "one whole answer",
    );
    // A resumed nothing else since its restart (the runs A lost went to B): one hand-over.
    const metrics = await (await fetch(`${A()}/metrics`)).text();
    assert.match(metrics, /^agentd_runs_resumed_total\{reason="handoff"\} 1$/m);
    assert.match(metrics, /^agentd_runs_resumed_total\{reason="lost"\} 0$/m);
    await replicas.restart("b");
  });
});

slowTest({
  name: "faults: SQLite, SIGKILL and restart: the run completes",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await using dir = await tempDir("agentd_resume_sqlite_");
  const words = Array.from({ length: 40 }, (_, i) => `s${i}`).join(" ");
  await dir.write({
    "agent.json": JSON.stringify({
      agent: { name: "resume", model: { provider: "echo" } },
      runtime: { storage: { path: `${dir.path}/agentd.db` } },
      http_server: {},
    }),
  });
  const serve = () => startServerProcess({ manifest: `${dir.path}/agent.json`, name: "sqlite" });
  let server = await serve();
  try {
    const res = await fetch(`${server.url}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        run_id: "crashed",
        session_id: "s-crashed",
        model: pacedModel(50),
        messages: [{ role: "user", content: [{ type: "text", value: words }] }],
      }),
    });
    const stream = readSse(res);
    await stream.until("text_message_content");
    server.kill("SIGKILL");
    await server.stop();
    await stream.cancel().catch(() => {});
    // The same file, a new process: the run it was executing goes on at once.
    server = await serve();
    const run = await eventually(async () => {
      const run = await (await fetch(`${server.url}/v1/runs/crashed`)).json();
      return run.status !== "running" && run;
    }, { timeout: 20_000, interval: 100, what: "the run to end after the restart" });
    assert.equal(run.status, "completed", JSON.stringify(run));
    assert.equal(run.attempt, 2);
    // Resumed as a lost run (its process was killed), not as a hand-over.
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    assert.match(metrics, /^agentd_runs_resumed_total\{reason="lost"\} 1$/m);
    assert.match(metrics, /^agentd_runs_resumed_total\{reason="handoff"\} 0$/m);
    const { items } = await (await fetch(`${server.url}/v1/sessions/s-crashed/messages`)).json();
    assert.deepEqual(items.map((m: { role: string }) => m.role), ["user", "assistant"]);
    assert.equal(items[1].content[0].value, words, "one whole answer");
  } finally {
    await server.stop();
  }
});
