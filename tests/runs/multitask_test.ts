/**
 * Double texting on the native API (`multitask_strategy`), on each store: a second run request to
 * a session whose run is going is refused (`reject`, the default), is queued behind it at once
 * and starts after it, in order (`enqueue`; cancellable while it waits), cancels it keeping its
 * progress (`interrupt`, the runs queued behind it too) or removing its messages (`rollback`), or
 * joins it (`steer`); an unknown strategy is a 422.
 */
import assert from "node:assert/strict";
import type { Message } from "../../src/api/schemas.ts";
import { sessionBusy } from "../../src/runs/multitask.ts";
import { listenForSteering, STEER_CHANNEL } from "../../src/runs/steering.ts";
import { createLogger } from "../../src/log.ts";
import { createMemoryPubSub } from "../../src/pubsub/memory.ts";
import { runServiceErrors } from "../../src/runs/errors.ts";
import {
  assertError,
  eventually,
  pacedModel,
  readEvents,
  readSse,
  startTestServer,
  storeKinds,
  type TestServer,
  userText,
} from "../_kit/mod.ts";

/** Twenty words: a run that streams for a while when paced. */
const LONG = Array.from({ length: 20 }, (_, i) => `w${i + 1}`).join(" ");
/** What a steer adds: long enough that the run is still answering it a while later. */
const ALSO = Array.from({ length: 20 }, (_, i) => `also${i + 1}`).join(" ");

async function startDetached(t: TestServer, body: Record<string, unknown>) {
  const res = await t.fetch("/v1/runs/start", { method: "POST", json: body });
  assert.equal(res.status, 202, await res.clone().text());
  return await res.json() as {
    run_id: string;
    session_id: string;
    steered?: boolean;
    status?: string;
  };
}

async function getRun(t: TestServer, runId: string): Promise<Record<string, unknown>> {
  const res = await t.fetch(`/v1/runs/${runId}`);
  assert.equal(res.status, 200);
  return await res.json();
}

async function conversation(t: TestServer, sessionId: string): Promise<Message[]> {
  const res = await t.fetch(`/v1/sessions/${sessionId}/messages`);
  assert.equal(res.status, 200);
  return (await res.json()).items;
}

const textOf = (m: Message) =>
  m.content.map((p) => p.type === "text" ? p.value : "").join("").trim();

/** Enqueues a detached run per word behind the session's running run. */
async function enqueueBehind(t: TestServer, session: string, words: string[]) {
  const runs = [];
  for (const word of words) {
    runs.push(
      await startDetached(t, {
        session_id: session,
        messages: [userText(word)],
        multitask_strategy: "enqueue",
      }),
    );
  }
  return runs;
}

/** A long first run of `session`, seen streaming its answer. */
async function busySession(t: TestServer, session: string, ms = 60) {
  const first = await startDetached(t, {
    session_id: session,
    messages: [userText(LONG)],
    model: pacedModel(ms),
  });
  // Its answer has begun: the model step is in flight.
  await using sse = readSse(await t.fetch(`/v1/runs/${first.run_id}/events?after=0`));
  await sse.until("text_message_content");
  return first;
}

/**
 * Interrupts the busy `first` run of `session` with a new message, reads the new run to its end,
 * and checks what the session then holds: `first`'s partial turn, then the new run's (nothing of
 * runs that were queued).
 */
async function interruptWith(t: TestServer, session: string, first: { run_id: string }) {
  const res = await t.fetch("/v1/runs", {
    method: "POST",
    json: { session_id: session, messages: [userText("instead")], multitask_strategy: "interrupt" },
  });
  assert.equal(res.status, 200);
  const events = await readEvents(res);
  assert.equal(events.at(-1)?.status, "completed");
  assert.equal((await getRun(t, first.run_id)).status, "cancelled");
  const messages = await conversation(t, session);
  const next = res.headers.get("x-run-id");
  assert.deepEqual(messages.map((m) => [m.role, m.run_id]), [
    ["user", first.run_id],
    ["assistant", first.run_id],
    ["user", next],
    ["assistant", next],
  ]);
  assert.ok(LONG.startsWith(textOf(messages[1])) && textOf(messages[1]).length > 0);
}

Deno.test("sessionBusy knows the start's refusal", () => {
  assert.ok(sessionBusy(runServiceErrors.sessionBusy("s")));
  assert.ok(!sessionBusy(runServiceErrors.runNotFound("r")));
});

for (const store of storeKinds) {
  Deno.test(`multitask (${store}): reject is the default, unknown strategies are 422`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-reject");
    for (const extra of [{}, { multitask_strategy: "reject" }]) {
      const res = await t.fetch("/v1/runs/start", {
        method: "POST",
        json: { session_id: "mt-reject", messages: [userText("again")], ...extra },
      });
      await assertError(res, 409003);
    }
    const bad = await t.fetch("/v1/runs/start", {
      method: "POST",
      json: { session_id: "mt-reject", messages: [userText("x")], multitask_strategy: "later" },
    });
    await assertError(bad, 422000, { field: "multitask_strategy" });
    await t.fetch(`/v1/runs/${first.run_id}/cancel`, { method: "PUT" });
  });

  Deno.test(`multitask (${store}): enqueue answers at once, its runs start in order`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-enqueue");
    const later = await enqueueBehind(t, "mt-enqueue", ["second", "third"]);
    // Answered while the first run still runs: stored queued behind it.
    for (const run of later) assert.equal(run.status, "queued");
    assert.equal((await getRun(t, first.run_id)).status, "running");
    assert.equal((await getRun(t, later[1].run_id)).status, "queued");
    for (const run of later) {
      await eventually(async () => (await getRun(t, run.run_id)).status === "completed");
    }
    assert.equal((await getRun(t, first.run_id)).status, "completed");
    const messages = await conversation(t, "mt-enqueue");
    assert.deepEqual(messages.map(textOf), [LONG, LONG, "second", "second", "third", "third"]);
    assert.deepEqual(messages.map((m) => m.run_id), [
      first.run_id,
      first.run_id,
      later[0].run_id,
      later[0].run_id,
      later[1].run_id,
      later[1].run_id,
    ]);
  });

  Deno.test(`multitask (${store}): an attached enqueue streams run_queued, then its run`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-enqueue-attached");
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: {
        session_id: "mt-enqueue-attached",
        messages: [userText("next")],
        multitask_strategy: "enqueue",
      },
    });
    assert.equal(res.status, 200);
    const events = await readEvents(res);
    assert.equal(events[0].kind, "run_queued");
    assert.equal(events[0].run_id, res.headers.get("x-run-id"));
    const end = events.at(-1)!;
    assert.equal(end.kind, "run_finished");
    assert.equal(end.status, "completed");
    assert.equal((await getRun(t, first.run_id)).status, "completed");
    const texts = (await conversation(t, "mt-enqueue-attached")).map(textOf);
    assert.deepEqual(texts, [LONG, LONG, "next", "next"]);
  });

  Deno.test(`multitask (${store}): an enqueued run can be cancelled`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-enqueue-cancel");
    const enqueue = (word: string) =>
      startDetached(t, {
        session_id: "mt-enqueue-cancel",
        messages: [userText(word)],
        multitask_strategy: "enqueue",
      });
    const droppedRun = await enqueue("dropped");
    const keptRun = await enqueue("kept");
    const cancel = await t.fetch(`/v1/runs/${droppedRun.run_id}/cancel`, { method: "PUT" });
    assert.ok(cancel.ok, await cancel.text());
    assert.equal((await getRun(t, droppedRun.run_id)).status, "cancelled");
    await eventually(async () => (await getRun(t, keptRun.run_id)).status === "completed");
    assert.equal((await getRun(t, first.run_id)).status, "completed");
    assert.equal((await getRun(t, droppedRun.run_id)).status, "cancelled");
    const texts = (await conversation(t, "mt-enqueue-cancel")).map(textOf);
    assert.deepEqual(texts, [LONG, LONG, "kept", "kept"]);
  });

  Deno.test(`multitask (${store}): interrupt cancels the run, keeping its progress`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-interrupt");
    // The first run's input and its partial answer stay, then the new run's turn.
    await interruptWith(t, "mt-interrupt", first);
  });

  Deno.test(`multitask (${store}): interrupt cancels the runs queued behind the run too`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-interrupt-queued");
    const queued = await enqueueBehind(t, "mt-interrupt-queued", ["q1", "q2", "q3"]);
    for (const run of queued) assert.equal(run.status, "queued");
    // The run and the three queued behind it make way together.
    await interruptWith(t, "mt-interrupt-queued", first);
    for (const run of queued) assert.equal((await getRun(t, run.run_id)).status, "cancelled");
  });

  Deno.test(`multitask (${store}): rollback cancels the run and removes its messages`, async () => {
    await using t = await startTestServer({ store });
    const before = await startDetached(t, {
      session_id: "mt-rollback",
      messages: [userText("kept")],
    });
    await eventually(async () => (await getRun(t, before.run_id)).status === "completed");
    const first = await busySession(t, "mt-rollback");
    const second = await startDetached(t, {
      session_id: "mt-rollback",
      messages: [userText("instead")],
      multitask_strategy: "rollback",
    });
    assert.equal((await getRun(t, first.run_id)).status, "cancelled");
    await eventually(async () => (await getRun(t, second.run_id)).status === "completed");
    const messages = await conversation(t, "mt-rollback");
    assert.deepEqual(messages.map(textOf), ["kept", "kept", "instead", "instead"]);
    assert.ok(messages.every((m) => m.run_id !== first.run_id));
  });
}

Deno.test("steering wakes: every run id published on the channel is heard", async () => {
  const pubsub = createMemoryPubSub({ capacity: 64, prefix: "steer-test" });
  const heard: string[] = [];
  const stop = await listenForSteering(pubsub, createLogger("error", {}, () => {}), (id) => {
    heard.push(id);
  });
  await pubsub.publish(STEER_CHANNEL, "r1");
  await pubsub.publish(STEER_CHANNEL, "r2");
  await eventually(() => heard.length === 2);
  assert.deepEqual(heard, ["r1", "r2"]);
  stop();
  await pubsub.close();
});

for (const store of storeKinds) {
  Deno.test(`multitask (${store}): steer joins the running run before its answer`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-steer");
    // Detached: answered once the run took the message, with the run it joined.
    const joined = await startDetached(t, {
      session_id: "mt-steer",
      messages: [userText(ALSO)],
      multitask_strategy: "steer",
    });
    assert.deepEqual(joined, { run_id: first.run_id, session_id: "mt-steer", steered: true });
    // Attached, while the run answers the first (its answer takes a while): the joined run's
    // stream from the new message on.
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: {
        session_id: "mt-steer",
        messages: [userText("one more")],
        multitask_strategy: "steer",
      },
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-run-id"), first.run_id);
    assert.equal(res.headers.get("x-steered"), "true");
    const events = await readEvents(res);
    assert.equal(events[0].kind, "messages_added");
    const added = events[0].messages as Message[];
    assert.deepEqual(added.map((m) => [m.role, textOf(m), m.run_id]), [
      ["user", "one more", first.run_id],
    ]);
    const end = events.at(-1)!;
    assert.equal(end.kind, "run_finished");
    assert.equal(end.status, "completed");
    assert.equal((end.result as { text: string }).text, "one more");
    // One run, its conversation: each message answered in turn, before its final answer.
    const messages = await conversation(t, "mt-steer");
    assert.ok(messages.every((m) => m.run_id === first.run_id));
    assert.deepEqual(messages.map((m) => [m.role, textOf(m)]), [
      ["user", LONG],
      ["assistant", LONG],
      ["user", ALSO],
      ["assistant", ALSO],
      ["user", "one more"],
      ["assistant", "one more"],
    ]);
    const runs = await t.fetch("/v1/sessions/mt-steer/runs");
    assert.equal((await runs.json()).items.length, 1);
  });

  Deno.test(`multitask (${store}): steer without a running run starts one`, async () => {
    await using t = await startTestServer({ store });
    const started = await startDetached(t, {
      session_id: "mt-steer-idle",
      messages: [userText("hello")],
      multitask_strategy: "steer",
    });
    assert.equal(started.steered, undefined);
    await eventually(async () => (await getRun(t, started.run_id)).status === "completed");
  });
}
