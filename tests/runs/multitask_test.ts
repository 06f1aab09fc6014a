/**
 * Double texting on the native API (`multitask_strategy`), on each store: a second run request to
 * a session whose run is going is refused (`reject`, the default), waits for that run's end
 * (`enqueue`), cancels it keeping its progress (`interrupt`) or removing its messages
 * (`rollback`), or joins it (`steer`); an unknown strategy is a 422.
 */
import assert from "node:assert/strict";
import type { Message } from "../../src/api/schemas.ts";
import { sessionBusy } from "../../src/runs/multitask.ts";
import { runServiceErrors } from "../../src/runs/errors.ts";
import {
  assertError,
  eventually,
  readEvents,
  readSse,
  startTestServer,
  storeKinds,
  type TestServer,
} from "../_kit/mod.ts";

const text = (value: string) => ({ role: "user", content: [{ type: "text", value }] });
const paced = (ms: number) => ({
  override: { inference_params: { provider_params: { delay_ms: ms } } },
});
/** Twenty words: a run that streams for a while when paced. */
const LONG = Array.from({ length: 20 }, (_, i) => `w${i + 1}`).join(" ");

async function startDetached(t: TestServer, body: Record<string, unknown>) {
  const res = await t.fetch("/v1/runs/start", { method: "POST", json: body });
  assert.equal(res.status, 202, await res.clone().text());
  return await res.json() as { run_id: string; session_id: string; steered?: boolean };
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

/** A long first run of `session`, seen streaming its answer. */
async function busySession(t: TestServer, session: string, ms = 60) {
  const first = await startDetached(t, {
    session_id: session,
    messages: [text(LONG)],
    model: paced(ms),
  });
  // Its answer has begun: the model step is in flight.
  await using sse = readSse(await t.fetch(`/v1/runs/${first.run_id}/events?after=0`));
  await sse.until("text_message_content");
  return first;
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
        json: { session_id: "mt-reject", messages: [text("again")], ...extra },
      });
      await assertError(res, 409003);
    }
    const bad = await t.fetch("/v1/runs/start", {
      method: "POST",
      json: { session_id: "mt-reject", messages: [text("x")], multitask_strategy: "later" },
    });
    await assertError(bad, 422000, { field: "multitask_strategy" });
    await t.fetch(`/v1/runs/${first.run_id}/cancel`, { method: "PUT" });
  });

  Deno.test(`multitask (${store}): enqueue starts after the current run, in order`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-enqueue", 20);
    const later = await Promise.all(["second", "third"].map((word, i) =>
      // The second is asked first: the order of the requests is the order of the runs.
      new Promise((r) => setTimeout(r, i * 50)).then(() =>
        startDetached(t, {
          session_id: "mt-enqueue",
          messages: [text(word)],
          multitask_strategy: "enqueue",
        })
      )
    ));
    assert.equal((await getRun(t, first.run_id)).status, "completed");
    for (const run of later) {
      await eventually(async () => (await getRun(t, run.run_id)).status === "completed");
    }
    const texts = (await conversation(t, "mt-enqueue")).map(textOf);
    assert.deepEqual(texts, [LONG, LONG, "second", "second", "third", "third"]);
  });

  Deno.test(`multitask (${store}): interrupt cancels the run, keeping its progress`, async () => {
    await using t = await startTestServer({ store });
    const first = await busySession(t, "mt-interrupt");
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: {
        session_id: "mt-interrupt",
        messages: [text("instead")],
        multitask_strategy: "interrupt",
      },
    });
    assert.equal(res.status, 200);
    const events = await readEvents(res);
    assert.equal(events.at(-1)?.status, "completed");
    assert.equal((await getRun(t, first.run_id)).status, "cancelled");
    const messages = await conversation(t, "mt-interrupt");
    // The first run's input and its partial answer stay, then the new run's turn.
    assert.deepEqual(messages.map((m) => [m.role, m.run_id]), [
      ["user", first.run_id],
      ["assistant", first.run_id],
      ["user", res.headers.get("x-run-id")],
      ["assistant", res.headers.get("x-run-id")],
    ]);
    assert.ok(LONG.startsWith(textOf(messages[1])) && textOf(messages[1]).length > 0);
  });

  Deno.test(`multitask (${store}): rollback cancels the run and removes its messages`, async () => {
    await using t = await startTestServer({ store });
    const before = await startDetached(t, { session_id: "mt-rollback", messages: [text("kept")] });
    await eventually(async () => (await getRun(t, before.run_id)).status === "completed");
    const first = await busySession(t, "mt-rollback");
    const second = await startDetached(t, {
      session_id: "mt-rollback",
      messages: [text("instead")],
      multitask_strategy: "rollback",
    });
    assert.equal((await getRun(t, first.run_id)).status, "cancelled");
    await eventually(async () => (await getRun(t, second.run_id)).status === "completed");
    const messages = await conversation(t, "mt-rollback");
    assert.deepEqual(messages.map(textOf), ["kept", "kept", "instead", "instead"]);
    assert.ok(messages.every((m) => m.run_id !== first.run_id));
  });
}
