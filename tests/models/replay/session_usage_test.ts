/**
 * A session read shows the tokens its runs used: the sum of every run's model steps, on every
 * store kind, through the real server.
 */
import assert from "node:assert/strict";
import { storeKinds } from "../../_kit/mod.ts";
import { run, runRecord, startRig, user } from "./run_kit.ts";
import { recording, replay, type Wire } from "./server.ts";

for (const store of storeKinds) {
  Deno.test(`replay: a session read sums its runs' usage (${store})`, async () => {
    const rec = recording("anthropic/anthropic-refusal.chunks.txt");
    await using rig = await startRig(rec.wire as Wire, { store });
    const created = await rig.t.fetch("/v1/sessions", {
      method: "POST",
      json: { session_id: "s" },
    });
    assert.equal(created.status, 201);
    const before = await (await rig.t.fetch("/v1/sessions/s")).json();
    assert.equal(before.usage, null, "no run reported a step yet");

    rig.replay.enqueue(replay(rec), replay(rec));
    const ids: string[] = [];
    for (const text of ["one", "two"]) {
      const events = await run(rig.t, { session_id: "s", messages: [user(text)] });
      assert.equal(events.at(-1)!.kind, "run_finished");
      ids.push(events.at(-1)!.run_id as string);
    }
    // Another session's run does not count.
    rig.replay.enqueue(replay(rec));
    await run(rig.t, { session_id: "other", messages: [user("three")] });

    const records = await Promise.all(ids.map((id) => runRecord(rig.t, id)));
    const res = await rig.t.fetch("/v1/sessions/s");
    assert.equal(res.status, 200);
    const session = await res.json();
    assert.equal(session.session_id, "s");
    // The recording reports 18 input, 5 output and 0 cached tokens per run.
    assert.deepEqual(session.usage, {
      input_tokens: 36,
      output_tokens: 10,
      cached_input_tokens: 0,
    });
    const sum = (k: string) =>
      records.reduce((n, r) => n + ((r.usage as Record<string, number>)[k] ?? 0), 0);
    assert.equal(session.usage.input_tokens, sum("input_tokens"));
    assert.equal(session.usage.output_tokens, sum("output_tokens"));
  });
}
