/**
 * Provider warnings: a setting the provider does not support (`top_k` on an OpenAI-compatible
 * server, which the AI SDK warns of and leaves out of the request) reaches the run record and the
 * run's `run finished` log line, once, while the client's stream is the same as without it.
 */
import assert from "node:assert/strict";
import { run, runRecord, startRig, user } from "./run_kit.ts";
import { recording, replay } from "./server.ts";

Deno.test("replay: a provider warning is on the run record and its log line, once", async () => {
  await using rig = await startRig("openai", {
    model: { inference_params: { top_k: 5 } },
  });
  const rec = recording("openai/openai-text.chunks.txt");
  rig.replay.enqueue(replay(rec));
  const events = await run(rig.t, { session_id: "w", messages: [user("hello")] });
  const end = events.at(-1)!;
  assert.equal(end.status, "completed");
  // Left out of the request, as the warning says.
  assert.equal((rig.replay.requests[0].body as Record<string, unknown>).top_k, undefined);

  const record = await runRecord(rig.t, end.run_id as string);
  const warnings = record.warnings as string[];
  assert.equal(warnings.length, 1, JSON.stringify(warnings));
  assert.match(warnings[0], /topK/);

  const finished = rig.t.logs.map((l) => JSON.parse(l)).filter((l) =>
    l.msg === "run finished" && l.run_id === end.run_id
  );
  assert.equal(finished.length, 1);
  assert.deepEqual(finished[0].warnings, warnings);
  // Nothing of it on the wire: the client sees a run like any other.
  assert.ok(!events.some((e) => JSON.stringify(e).includes("topK")));
});
