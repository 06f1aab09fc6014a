/**
 * A run's model report (engine/report.ts): steps with our finish reasons, warnings once each,
 * saved after every step, totals for `run_finished`, nothing saved when nothing was reported, a
 * failed save logged, and a later attempt going on from what the earlier ones saved.
 */
import assert from "node:assert/strict";
import { RunReport } from "../../src/engine/report.ts";
import { createLogger } from "../../src/log.ts";
import { costOf, modelFields, type ModelReport } from "../../src/api/usage.ts";
import type { Run } from "../../src/api/schemas.ts";

const model = { provider: "anthropic", model: "claude" };
const run = { tenant_id: "t", run_id: "r1" };
const quietLog = () => createLogger("error", {}, () => {});

/** A store keeping the saved reports, the last one read back as the run record's fields. */
function reportStore() {
  const saved: { report: ModelReport; attempt?: number }[] = [];
  return {
    saved,
    saveModelReport: (_: string, report: ModelReport, attempt?: number) =>
      Promise.resolve(void saved.push({ report: structuredClone(report), attempt })),
    getRun: () => {
      const last = saved.at(-1)?.report;
      return Promise.resolve(last ? { ...modelFields(last) } as unknown as Run : null);
    },
  };
}

Deno.test("run report: steps, warnings once, saved after every step, totals", async () => {
  const store = reportStore();
  const report = new RunReport(store, run, model, quietLog());
  await report.step(
    2,
    { reason: "tool-calls", raw_reason: "tool_use", usage: { input_tokens: 10 } },
    ["other: w"],
  );
  assert.equal(store.saved.length, 1, "the first step is saved when it ends");
  await report.step(4, null, ["other: w"]);
  await report.step(5, {
    reason: "content-filter",
    raw_reason: "refusal",
    usage: { input_tokens: 5, output_tokens: 2 },
  }, []);
  assert.deepEqual(await report.totals(), {
    usage: { input_tokens: 15, output_tokens: 2 },
    finish_reason: "refusal",
    cost: null,
  });
  assert.deepEqual(store.saved.at(-1)?.report, {
    ...model,
    steps: [
      {
        step: 2,
        finish_reason: "tool_calls",
        raw_finish_reason: "tool_use",
        usage: { input_tokens: 10 },
      },
      {
        step: 5,
        finish_reason: "refusal",
        raw_finish_reason: "refusal",
        usage: { input_tokens: 5, output_tokens: 2 },
      },
    ],
    warnings: ["other: w"],
  });
});

Deno.test("run report: a later attempt counts the steps the lost one saved", async () => {
  const store = reportStore();
  const first = new RunReport(store, run, model, quietLog(), { attempt: 1 });
  await first.step(1, { reason: "tool-calls", usage: { input_tokens: 100 } }, ["other: w"]);
  // The first attempt's replica is lost here: its step's tokens were spent all the same.
  const second = new RunReport(store, run, model, quietLog(), { attempt: 2 });
  await second.step(3, { reason: "stop", usage: { input_tokens: 40, output_tokens: 7 } }, [
    "other: w",
  ]);
  assert.deepEqual(await second.totals(), {
    usage: { input_tokens: 140, output_tokens: 7 },
    finish_reason: "stop",
    cost: null,
  });
  const last = store.saved.at(-1)!;
  assert.equal(last.attempt, 2, "written as the second attempt (fenced)");
  assert.deepEqual(last.report.steps.map((s) => s.step), [1, 3]);
  assert.deepEqual(last.report.warnings, ["other: w"]);
});

Deno.test("run report: nothing reported, nothing saved; a failed save is logged", async () => {
  const lines: string[] = [];
  const failing = {
    saveModelReport: () => Promise.reject(new Error("store down")),
    getRun: () => Promise.resolve(null),
  };
  const quiet = new RunReport(failing, run, model, createLogger("error", {}, (l) => lines.push(l)));
  await quiet.step(1, null, []);
  assert.deepEqual(await quiet.totals(), { usage: null, finish_reason: null, cost: null });
  assert.equal(lines.length, 0, "no write was tried");
  await quiet.step(2, { reason: "stop", usage: {} }, []);
  assert.deepEqual(await quiet.totals(), { usage: {}, finish_reason: "stop", cost: null });
  assert.match(lines.join("\n"), /could not save the model report/);
});

Deno.test("run report: a price gives each step its cost (cached input at its own price)", async () => {
  const store = reportStore();
  const price = { input_per_mtok: 2, output_per_mtok: 10, cached_input_per_mtok: 0.5 };
  const report = new RunReport(store, run, model, quietLog(), { price });
  // 1000 input of which 400 cached, 200 output (reasoning included, billed as output).
  const usage = {
    input_tokens: 1000,
    cached_input_tokens: 400,
    output_tokens: 200,
    reasoning_tokens: 50,
  };
  await report.step(1, { reason: "stop", usage }, []);
  // Only output reported: the input counts add nothing (never guessed).
  await report.step(2, { reason: "stop", usage: { output_tokens: 100 } }, []);
  const [first, second] = store.saved.at(-1)!.report.steps;
  assert.equal(first.cost, (600 * 2 + 400 * 0.5 + 200 * 10) / 1e6);
  assert.equal(second.cost, 0.001);
  assert.equal(modelFields(store.saved.at(-1)!.report).cost, 0.0044);
  // Without a cached price, cached input costs the input price.
  assert.equal(costOf(usage, { input_per_mtok: 2 }), 0.002);
  // No price: no cost.
  const unpriced = reportStore();
  await new RunReport(unpriced, run, model, quietLog()).step(1, { reason: "stop", usage }, []);
  assert.ok(!("cost" in unpriced.saved[0].report.steps[0]));
  assert.equal(modelFields(unpriced.saved[0].report).cost, null);
});
