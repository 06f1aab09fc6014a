/**
 * Tokens by tenant (`agentd_tenant_tokens_total{tenant,kind}`), with its cardinality guard: the
 * first `runtime.metrics.max_tenants` tenants that spend tokens get a label of their own, every
 * later one is counted under `tenant="_other"`, so a flood of tenants cannot grow the scrape.
 */
import assert from "node:assert/strict";
import { run, startRig, user } from "./run_kit.ts";
import { recording, replay, type Wire } from "./server.ts";

/** The value of one sample line of the scrape, or undefined when it is absent. */
function sample(scrape: string, labels: string): number | undefined {
  const line = scrape.split("\n").find((l) =>
    l.startsWith(`agentd_tenant_tokens_total{${labels}} `)
  );
  return line === undefined ? undefined : Number(line.split(" ").at(-1));
}

Deno.test("replay: tokens by tenant, past max_tenants under _other", async () => {
  // 18 input and 5 output tokens per run (the recording's usage).
  const rec = recording("anthropic/anthropic-refusal.chunks.txt");
  await using rig = await startRig(rec.wire as Wire, { runtime: { metrics: { max_tenants: 2 } } });
  const tenants = ["acme", "globex", "acme", "initech", "umbrella"];
  for (const tenant of tenants) {
    rig.replay.enqueue(replay(rec));
    const res = await rig.t.fetch("/v1/runs", {
      method: "POST",
      tenant,
      json: { messages: [user("hi")] },
    });
    assert.equal(res.status, 200);
    await res.text();
  }
  // The tenant the default header gives counts too: the guard is already full.
  rig.replay.enqueue(replay(rec));
  await run(rig.t, { messages: [user("hi")] });

  const scrape = await (await rig.t.fetch("/metrics")).text();
  assert.equal(sample(scrape, `tenant="acme",kind="input"`), 36);
  assert.equal(sample(scrape, `tenant="acme",kind="output"`), 10);
  assert.equal(sample(scrape, `tenant="globex",kind="input"`), 18);
  // initech, umbrella and default came after the two labels were taken.
  assert.equal(sample(scrape, `tenant="_other",kind="input"`), 54);
  assert.equal(sample(scrape, `tenant="_other",kind="output"`), 15);
  for (const tenant of ["initech", "umbrella", "default"]) {
    assert.ok(!scrape.includes(`tenant="${tenant}"`), tenant);
  }
  // The provider's 0 cached tokens adds no sample.
  assert.equal(sample(scrape, `tenant="acme",kind="cached_input"`), undefined);
});
