/**
 * What a client has been told about survives a database crash. Once a client has `run_started`,
 * its run and its input messages are on disk; once it has a step's `step_finished`, so are that
 * step's messages, and the run's end, written after the database is back, never leaves a hole in
 * the conversation. The server here flushes asynchronous commits only every 10 s
 * (`wal_writer_delay`) and the replica's heartbeat is as slow, so nothing else flushes the WAL
 * between a commit and the crash: a commit that did not wait for the flush would be lost.
 */
import assert from "node:assert/strict";
import { pacedModel, readSse, slowTest, startServerProcess, tempDir } from "../_kit/mod.ts";
import { connect, faultServices, startPostgres } from "./services.ts";

const enabled = faultServices("the durability fault test", { redis: false });

slowTest({
  name: "durability: started runs and finished steps survive a PostgreSQL crash",
  ignore: !enabled,
  sanitizeOps: false,
  sanitizeResources: false,
}, async (tt) => {
  await using pg = await startPostgres({ wal_writer_delay: "10s", wal_writer_flush_after: "0" });
  await using dir = await tempDir("agentd_durability_");
  await dir.write({
    "tools/math.js": "export function add(a) { return { sum: a.x + a.y }; }\n",
    "agent.json": JSON.stringify({
      agent: { name: "durable", model: { provider: "echo" }, capabilities: ["math"] },
      capability: { math: { tools: ["add"] } },
      tool: { add: { kind: "javascript", module: "tools/math.js", function: "add" } },
      runtime: {
        storage: { url: pg.url, schema: "durable", timeout: 1_000 },
        replica: { heartbeat_interval: 10_000, lease: 60_000, poll_interval: 60_000 },
      },
      http_server: {},
    }),
  });
  await using server = await startServerProcess({
    manifest: `${dir.path}/agent.json`,
    name: "replica",
  });
  await using sql = connect(pg.url);
  /** Starts a run whose echo answer streams one word a second. */
  const start = (run_id: string, text: string) =>
    fetch(`${server.url}/v1/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        run_id,
        model: pacedModel(1_000),
        messages: [{ role: "user", content: [{ type: "text", value: text }] }],
      }),
    });
  const conversation = async (session: string) =>
    (await sql`SELECT role, content, tool_calls FROM durable.messages
      WHERE session_id = ${session} AND removed_clock IS NULL ORDER BY pos`)
      .map((m) => ({ ...m }));

  await tt.step("a run crashed right after run_started keeps its run and input", async () => {
    const res = await start("acknowledged", "keep this message");
    assert.equal(res.status, 200);
    const stream = readSse(res);
    const started = JSON.parse((await stream.until((e) => e.data.includes('"run_started"'))).data);
    await pg.crash();
    await stream.cancel();
    await pg.start();
    const runs = await sql`SELECT run_id FROM durable.runs WHERE run_id = 'acknowledged'`;
    assert.equal(runs.length, 1, "the acknowledged run is in the store after recovery");
    const messages = await conversation(started.session_id);
    assert.match(JSON.stringify(messages), /keep this message/);
  });

  await tt.step("a crash after a step leaves no hole once the run ends", async () => {
    const res = await start("stepped", '/call add {"x":2,"y":3}');
    assert.equal(res.status, 200);
    const stream = readSse(res);
    const started = JSON.parse((await stream.until((e) => e.data.includes('"run_started"'))).data);
    // The tools step (the call's result) is committed before its step_finished.
    await stream.until((e) => {
      const event = JSON.parse(e.data);
      return event.kind === "step_finished" && event.step_name === "tools";
    });
    await pg.crash();
    await pg.start();
    const events = await stream.all();
    const finished = JSON.parse(events.at(-1)!.data);
    assert.equal(finished.kind, "run_finished");
    assert.equal(finished.status, "completed", JSON.stringify(finished));
    const roles = (await conversation(started.session_id)).map((m) => m.role);
    assert.deepEqual(roles, ["user", "assistant", "tool", "assistant"]);
  });
});
