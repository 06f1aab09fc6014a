/**
 * How a failed run ends (engine/run_error.ts and the engine's salvage): a model failure is the
 * run's error with its payload and keeps the partial text; anything unexpected is
 * `internal_error`, logged with the run's ids, never shown.
 */
import assert from "node:assert/strict";
import { runErrorOf } from "../../src/engine/run_error.ts";
import { StoreUnavailable } from "../../src/store/mod.ts";
import { createLogger, withLogContext } from "../../src/log.ts";
import { describe, Harness, ModelError, user } from "./fakes.ts";

Deno.test("a ModelError fails the run with its payload; partial text is kept", async () => {
  const err = new ModelError("rate_limited", "slow down", "fake", "fake-1", 3);
  await using h = await Harness.create({
    turns: [{ open_error: err }, [{ type: "text-delta", delta: "Half an " }, { fail: err }]],
  });
  const a = await h.run({ session_id: "s1", messages: [user("q1")] });
  assert.deepEqual(a.kinds, [
    "run_started",
    "messages_snapshot",
    "step_started",
    "step_finished",
    "run_finished",
  ]);
  assert.equal(a.finished.status, "failed");
  assert.deepEqual(a.finished.error, {
    code: "rate_limited",
    message: "slow down",
    provider: "fake",
    model: "fake-1",
    attempts: 3,
  });
  assert.equal(a.finished.result, null);

  const b = await h.run({ session_id: "s1", messages: [user("q2")] });
  assert.equal(b.finished.status, "failed");
  assert.deepEqual(b.kinds.slice(-4), [
    "text_message_content",
    "text_message_end",
    "step_finished",
    "run_finished",
  ]);
  assert.deepEqual(await h.transcript("s1"), ["user:q1", "user:q2", "assistant:Half an "]);
  const cp = await h.store.latestCheckpoint(h.tenant, "s1");
  assert.deepEqual(describe(cp!.state.messages), ["user:q1", "user:q2", "assistant:Half an "]);
});

Deno.test("an unexpected error fails the run with internal_error, logged with its ids", async () => {
  await using h = await Harness.create({ turns: [] });
  const out = await withLogContext(
    { request_id: "req-9" },
    () => h.run({ session_id: "s1", run_id: "r-internal" }),
  );
  assert.equal(out.finished.status, "failed");
  assert.deepEqual(out.finished.error, {
    code: "internal_error",
    message: "the run failed with an internal error",
  });
  const lines = h.logs.map((l) => JSON.parse(l));
  const line = lines.find((l) => l.msg === "run failed with an internal error");
  assert.ok(line, h.logs.join("\n"));
  assert.equal(line.level, "error");
  assert.deepEqual(
    [line.request_id, line.tenant, line.run_id, line.session_id],
    ["req-9", h.tenant, "r-internal", "s1"],
  );
  assert.match(line.error, /the script has no more turns/);
});

Deno.test("runErrorOf: a model's failure as it said it, an outage, anything else hidden", () => {
  const logs: string[] = [];
  const log = createLogger("debug", {}, (line) => logs.push(line));
  const model = new ModelError("model_http_429", "slow down", "openai", "gpt", 3);
  assert.deepEqual(runErrorOf(model, log), {
    code: "model_http_429",
    message: "slow down",
    provider: "openai",
    model: "gpt",
    attempts: 3,
  });
  assert.equal(
    runErrorOf(new StoreUnavailable("commitStep", "down"), log).code,
    "store_unavailable",
  );
  const hidden = runErrorOf(new Error("SELECT * FROM secrets"), log);
  assert.deepEqual(hidden, {
    code: "internal_error",
    message: "the run failed with an internal error",
  });
  assert.ok(logs.some((l) => l.includes("SELECT * FROM secrets")), "the detail goes to the log");
});
