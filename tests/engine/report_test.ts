/**
 * A run's model report (engine/report.ts): steps with our finish reasons, warnings once each,
 * totals for `run_finished`, nothing saved when nothing was reported, a failed save logged.
 */
import assert from "node:assert/strict";
import { RunReport } from "../../src/engine/report.ts";
import { createLogger } from "../../src/log.ts";
import type { ModelReport } from "../../src/api/usage.ts";

const model = { provider: "anthropic", model: "claude" };

Deno.test("run report: steps, warnings once, totals", async () => {
  const saved: ModelReport[] = [];
  const store = {
    saveModelReport: (_: string, r: ModelReport) => Promise.resolve(void saved.push(r)),
  };
  const report = new RunReport(store, "r1", model, createLogger("error", {}, () => {}));
  report.step(2, { reason: "tool-calls", raw_reason: "tool_use", usage: { input_tokens: 10 } }, [
    "other: w",
  ]);
  report.step(4, null, ["other: w"]);
  report.step(5, {
    reason: "content-filter",
    raw_reason: "refusal",
    usage: { input_tokens: 5, output_tokens: 2 },
  }, []);
  assert.deepEqual(await report.save(), {
    usage: { input_tokens: 15, output_tokens: 2 },
    finish_reason: "refusal",
  });
  assert.deepEqual(saved, [{
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
  }]);
});

Deno.test("run report: nothing reported, nothing saved; a failed save is logged", async () => {
  const lines: string[] = [];
  const failing = { saveModelReport: () => Promise.reject(new Error("store down")) };
  const quiet = new RunReport(
    failing,
    "r1",
    model,
    createLogger("error", {}, (l) => lines.push(l)),
  );
  assert.deepEqual(await quiet.save(), { usage: null, finish_reason: null });
  assert.equal(lines.length, 0, "no write was tried");
  quiet.step(1, { reason: "stop", usage: {} }, []);
  assert.deepEqual(await quiet.save(), { usage: {}, finish_reason: "stop" });
  assert.match(lines.join("\n"), /could not save the model report/);
});
