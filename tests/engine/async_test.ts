/**
 * The engine's async plumbing (engine/async.ts): a tool's live emits interleaved with the run's
 * events, and an abort that ends the wait even when the task goes on.
 */
import assert from "node:assert/strict";
import { RunCancelled, withPushes } from "../../src/engine/async.ts";

Deno.test("withPushes: yields pushes in order, drops late ones, returns the value", async () => {
  let late!: (n: number) => void;
  const gen = withPushes<number, string>(async (push) => {
    push(1);
    await Promise.resolve();
    push(2);
    late = push;
    return "v";
  }, new AbortController().signal);
  const seen: number[] = [];
  let r = await gen.next();
  while (!r.done) {
    seen.push(r.value);
    r = await gen.next();
  }
  late(3);
  assert.deepEqual(seen, [1, 2]);
  assert.equal(r.value, "v");
});

Deno.test("withPushes: an abort ends it with RunCancelled while the task still runs", async () => {
  const controller = new AbortController();
  let stop!: () => void;
  const gen = withPushes<number, void>(
    () => new Promise<void>((resolve) => stop = resolve),
    controller.signal,
  );
  const next = gen.next();
  controller.abort();
  await assert.rejects(next, RunCancelled);
  stop();
});
