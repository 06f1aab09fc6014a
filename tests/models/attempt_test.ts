/**
 * One attempt to establish a model stream (models/attempt.ts), through the client: the
 * establishment timeout runs from the start of an attempt to the first body byte (headers that
 * never come, a body that never starts), is retried, and never cuts an established slow stream.
 */
import assert from "node:assert/strict";
import { createModelClient } from "../../src/models/mod.ts";
import * as openai from "./fake_openai.ts";
import { ask, assertModelError, collect, resolved, textOf, timed } from "./helpers.ts";

const client = createModelClient({ env: {} });
const never = new AbortController().signal;

Deno.test("timeout: headers that never come are retried, then model_timeout", async () => {
  await using server = openai.startFakeOpenAI();
  for (let i = 0; i < 3; i++) server.enqueue({ kind: "hang" });
  const model = resolved("openai", server.url, {
    timeout: 200,
    retry: { max_attempts: 3, initial_backoff: 10, max_backoff: 20 },
  });
  const { ms, error } = await timed(() => client.open(model, ask("x"), never));
  assertModelError(error, "model_timeout", 3);
  assert.equal(server.requests.length, 3);
  assert.ok(ms >= 600, `elapsed ${ms}`);
  assert.ok(ms < 3000, `elapsed ${ms}`);
});

Deno.test("timeout: a hang then a good answer establishes on the second attempt", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue({ kind: "hang" }, openai.text(["ok"]));
  const model = resolved("openai", server.url, { timeout: 150 });
  const stream = await client.open(model, ask("x"), never);
  assert.equal(stream.attempts, 2);
  assert.equal(textOf(await collect(stream)), "ok");
});

Deno.test("timeout: headers without a first body byte also time out", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue({ kind: "hang_body" }, { kind: "hang_body" });
  const model = resolved("openai", server.url, {
    timeout: 150,
    retry: { max_attempts: 2, initial_backoff: 10, max_backoff: 10 },
  });
  const { error } = await timed(() => client.open(model, ask("x"), never));
  assertModelError(error, "model_timeout", 2);
});

Deno.test("timeout: never cuts an established slow stream", async () => {
  await using server = openai.startFakeOpenAI();
  server.enqueue(openai.text(["one ", "two ", "three ", "four"], { delay: 300 }));
  const model = resolved("openai", server.url, { timeout: 200 });
  const { ms, value } = await timed(async () => collect(await client.open(model, ask("x"), never)));
  assert.ok(value, "the stream completes");
  assert.equal(textOf(value), "one two three four");
  assert.ok(ms >= 1100, `the stream lasted ${ms} ms`);
  assert.equal(server.requests.length, 1);
});
