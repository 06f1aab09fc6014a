/**
 * A session read shows the tokens its runs used, the sum of every run's model steps, and with a
 * price in the manifest (`agent.model.prices`) what they cost; on every store kind, through the
 * real server.
 */
import assert from "node:assert/strict";
import { storeKinds } from "../../_kit/mod.ts";
import { run, runRecord, startRig, user } from "./run_kit.ts";
import { recording, replay, type Wire } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

/** Two runs on session `s` and one on another; the session read and the two run records. */
async function twoRuns(
  store: (typeof storeKinds)[number],
  prices?: Record<string, unknown>,
): Promise<{ session: Loose; records: Loose[]; before: Loose }> {
  const rec = recording("anthropic/anthropic-refusal.chunks.txt");
  await using rig = await startRig(rec.wire as Wire, { store, model: prices ? { prices } : {} });
  const created = await rig.t.fetch("/v1/sessions", { method: "POST", json: { session_id: "s" } });
  assert.equal(created.status, 201);
  const before = await (await rig.t.fetch("/v1/sessions/s")).json();

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
  return { session: await res.json(), records, before };
}

for (const store of storeKinds) {
  Deno.test(`replay: a session read sums its runs' usage (${store})`, async () => {
    const { session, records, before } = await twoRuns(store);
    assert.equal(before.usage, null, "no run reported a step yet");
    assert.equal(before.cost, null);
    assert.equal(session.session_id, "s");
    // The recording reports 18 input, 5 output and 0 cached tokens per run.
    assert.deepEqual(session.usage, {
      input_tokens: 36,
      output_tokens: 10,
      cached_input_tokens: 0,
    });
    const sum = (k: string) => records.reduce((n, r) => n + (r.usage[k] ?? 0), 0);
    assert.equal(session.usage.input_tokens, sum("input_tokens"));
    assert.equal(session.usage.output_tokens, sum("output_tokens"));
    // No price: no cost anywhere.
    assert.equal(session.cost, null);
    for (const record of records) {
      assert.equal(record.cost, null);
      assert.ok(!("cost" in record.model_steps[0]));
    }
  });

  Deno.test(`replay: a model's price turns usage into cost on runs and sessions (${store})`, async () => {
    const prices = {
      "anthropic-replayed": { input_per_mtok: 3, output_per_mtok: 15, cached_input_per_mtok: 0.3 },
      "some-other-model": { input_per_mtok: 1000 },
    };
    const { session, records } = await twoRuns(store, prices);
    // 18 input at 3 and 5 output at 15 per million tokens.
    const perRun = (18 * 3 + 5 * 15) / 1_000_000;
    for (const record of records) {
      assert.equal(record.cost, perRun);
      assert.equal(record.model_steps[0].cost, perRun);
    }
    assert.equal(session.cost, 2 * perRun);
    assert.deepEqual(session.usage, {
      input_tokens: 36,
      output_tokens: 10,
      cached_input_tokens: 0,
    });
  });
}
