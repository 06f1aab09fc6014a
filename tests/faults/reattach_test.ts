/**
 * Clients of attached runs across a lost replica (issue 23): two replicas (`main.ts serve`
 * processes) on a PostgreSQL and a Redis of the suite's own (services.ts), with
 * `on_disconnect = "cancel"` (the default) and a re-attach grace of `GRACE`.
 *
 * - SIGKILL during a model step: the client re-attaches on the other replica by cursor, which
 *   resumes the run as attempt 2; the client sees one numbering, `run_resumed`, then the new
 *   attempt's answer whole and alone; one answer is stored.
 * - SIGKILL, the client back only once the run was resumed (within the grace): it completes.
 * - SIGKILL, no client back: the resumed run is cancelled after the grace.
 * - A dropped connection (the replica lives): back on the other replica within the grace, the
 *   run completes; not back, it is cancelled after the grace.
 */
import assert from "node:assert/strict";
import {
  eventually,
  pacedModel,
  readSse,
  slowTest,
  type SseEvent,
  type SseReader,
  startServerProcess,
  tempDir,
} from "../_kit/mod.ts";
import { startReplicas } from "./replicas.ts";
import { connect, faultServices, startPostgres, startRedis } from "./services.ts";

const enabled = faultServices("the re-attach fault test");

const LEASE = 1_500;
const GRACE = 2_000;
/** Words of each answer, one every `PACE` ms: an attempt answers for longer than lease + grace. */
const WORDS = 70;
const PACE = 60;

slowTest({
  name: "faults: clients of attached runs re-attach across a lost replica",
  ignore: !enabled,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (tt) => {
  await using pg = await startPostgres();
  await using redis = await startRedis();
  await using dir = await tempDir("agentd_reattach_");
  const manifest = (id: string) => ({
    agent: { name: "reattach", model: { provider: "echo" } },
    runtime: {
      storage: { url: pg.url, schema: "reattach", timeout: 2_000 },
      pubsub: { kind: "redis", url: redis.url },
      replica: { id, heartbeat_interval: 200, lease: LEASE, poll_interval: 100 },
      attached: { reattach_grace: GRACE },
    },
    http_server: {},
  });
  await dir.write({
    "a.json": JSON.stringify(manifest("a")),
    "b.json": JSON.stringify(manifest("b")),
  });
  await using replicas = await startReplicas((id) =>
    startServerProcess({ manifest: `${dir.path}/${id}.json`, name: `replica ${id}` })
  );
  await using sql = connect(pg.url);
  const A = () => replicas.url("a");
  const B = () => replicas.url("b");

  /** An attached run on A (`on_disconnect` left to its default, cancel), read to its first token. */
  const attachedOnA = async (label: string) => {
    const words = Array.from({ length: WORDS }, (_, i) => `${label}${i}`).join(" ");
    const res = await fetch(`${A()}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: pacedModel(PACE),
        messages: [{ role: "user", content: [{ type: "text", value: words }] }],
      }),
    });
    assert.equal(res.status, 200);
    const first = readSse(res);
    await first.until("text_message_content");
    return {
      words,
      first,
      run_id: res.headers.get("x-run-id")!,
      session_id: res.headers.get("x-session-id")!,
    };
  };
  /** Re-attaches on B with the cursor of what `first` read. */
  const reattachOnB = async (run_id: string, first: SseReader) =>
    readSse(
      await fetch(`${B()}/v1/runs/${run_id}/events`, {
        headers: { "last-event-id": first.events.at(-1)!.id! },
      }),
    );
  const record = async (runId: string) => (await fetch(`${B()}/v1/runs/${runId}`)).json();
  const ended = (runId: string) =>
    eventually(async () => {
      const run = await record(runId);
      return run.status !== "running" && run;
    }, { timeout: 30_000, interval: 50, what: `run ${runId} to end` });
  const resumed = (runId: string) =>
    eventually(async () => (await record(runId)).attempt === 2, {
      timeout: 15_000,
      interval: 50,
      what: `B to resume run ${runId}`,
    });
  const answers = async (session: string) =>
    (await sql`SELECT content FROM reattach.messages WHERE session_id = ${session}
      AND role = 'assistant' AND removed_clock IS NULL ORDER BY pos`)
      .map((m) => (m.content as { value: string }[])[0].value);
  const killA = async () => {
    replicas.a.kill("SIGKILL");
    await replicas.a.stop();
  };
  const restartA = () => replicas.restart("a");
  /** The events of a client that read `first`, then `rest` after re-attaching. */
  const seen = (first: SseReader, rest: SseEvent[]) => [...first.events, ...rest];

  await tt.step("SIGKILL during a model step: back on B by cursor, one answer", async () => {
    const { words, first, run_id, session_id } = await attachedOnA("k");
    const killed = performance.now();
    await killA();
    await first.all().catch(() => {}); // the connection broke
    const rest = await (await reattachOnB(run_id, first)).all();
    const run = await ended(run_id);
    console.log(`  completed on B ${Math.round(performance.now() - killed)} ms after SIGKILL`);
    assert.equal(run.status, "completed", JSON.stringify(run));
    assert.equal(run.attempt, 2);
    const events = seen(first, rest);
    const ids = events.map((e) => Number(e.id));
    assert.deepEqual(ids, ids.map((_, i) => i + 1), "one numbering, no gap, no repeat");
    const at = events.findIndex((e) => e.event === "run_resumed");
    assert.ok(at > 0, "run_resumed in the stream");
    assert.equal(JSON.parse(events[at].data).attempt, 2);
    assert.equal(events[at + 1].event, "messages_snapshot");
    const answer = events.slice(at).filter((e) => e.event === "text_message_content")
      .map((e) => JSON.parse(e.data).delta).join("");
    assert.equal(answer, words, "the new attempt's answer, whole and alone");
    assert.equal(JSON.parse(events.at(-1)!.data).status, "completed");
    assert.deepEqual(await answers(session_id), [words], "one answer stored");
    await restartA();
  });

  await tt.step("SIGKILL, the client back after the resume, within the grace", async () => {
    const { words, first, run_id, session_id } = await attachedOnA("r");
    await killA();
    await first.all().catch(() => {});
    await resumed(run_id);
    const rest = await (await reattachOnB(run_id, first)).all();
    assert.equal(JSON.parse(rest.at(-1)!.data).status, "completed");
    assert.equal((await ended(run_id)).status, "completed");
    assert.deepEqual(await answers(session_id), [words]);
    await restartA();
  });

  await tt.step("SIGKILL, no client back: cancelled once the grace passed", async () => {
    const { first, run_id, session_id } = await attachedOnA("n");
    await killA();
    await first.all().catch(() => {});
    await resumed(run_id);
    const at = performance.now();
    const run = await ended(run_id);
    console.log(`  cancelled ${Math.round(performance.now() - at)} ms after the resume`);
    assert.equal(run.status, "cancelled", JSON.stringify(run));
    assert.equal(run.attempt, 2);
    assert.ok(replicas.b.logs.some((l) => l.includes("run waits for its client to re-attach")));
    assert.ok(replicas.b.logs.some((l) => l.includes("no client re-attached within the grace")));
    assert.ok((await answers(session_id)).length <= 1);
    await restartA();
  });

  await tt.step("a dropped connection, back on B within the grace: completes", async () => {
    const { words, first, run_id, session_id } = await attachedOnA("d");
    await first.cancel();
    const rest = await (await reattachOnB(run_id, first)).all();
    const events = seen(first, rest);
    const ids = events.map((e) => Number(e.id));
    assert.deepEqual(ids, ids.map((_, i) => i + 1), "one numbering");
    const answer = events.filter((e) => e.event === "text_message_content")
      .map((e) => JSON.parse(e.data).delta).join("");
    assert.equal(answer, words);
    const run = await ended(run_id);
    assert.equal(run.status, "completed");
    assert.equal(run.attempt, 1);
    assert.deepEqual(await answers(session_id), [words]);
  });

  await tt.step("a dropped connection, no client back: cancelled after the grace", async () => {
    const { first, run_id } = await attachedOnA("g");
    const dropped = performance.now();
    await first.cancel();
    const run = await ended(run_id);
    console.log(`  cancelled ${Math.round(performance.now() - dropped)} ms after the drop`);
    assert.equal(run.status, "cancelled");
    assert.ok(replicas.a.logs.some((l) => l.includes("no client re-attached within the grace")));
  });
});
