/**
 * The ids agentd generates: UUIDs of version 7, ordered by the millisecond they were made, for
 * the sessions, runs, messages and checkpoints a run creates over HTTP.
 */
import assert from "node:assert/strict";
import { newId } from "../src/ids.ts";
import { type EventData, readSse, startTestServer, userText } from "./_kit/mod.ts";

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The milliseconds a version 7 UUID carries in its first 48 bits. */
function millis(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

Deno.test("newId: a version 7 UUID whose first 48 bits are the milliseconds given", () => {
  for (const ms of [0, 1, 1_795_750_000_000, 2 ** 48 - 1]) {
    const id = newId(ms);
    assert.match(id, V7);
    assert.equal(millis(id), ms);
  }
  const before = Date.now();
  const id = newId();
  assert.ok(millis(id) >= before && millis(id) <= Date.now(), id);
});

Deno.test("newId: ids of later milliseconds sort after, and ids never repeat", () => {
  const made = Array.from({ length: 1000 }, (_, i) => newId(1_795_750_000_000 + i * 7));
  assert.deepEqual([...made].sort(), made);
  const many = new Set(Array.from({ length: 20_000 }, () => newId(1_795_750_000_000)));
  assert.equal(many.size, 20_000);
});

Deno.test("a run over HTTP generates version 7 ids for what it keeps", async () => {
  await using t = await startTestServer({ store: "sqlite" });
  const started: EventData[] = [];
  for (const text of ["first", "second"]) {
    const res = await t.fetch("/v1/runs", { method: "POST", json: { messages: [userText(text)] } });
    assert.equal(res.status, 200);
    const events = (await readSse(res).all()).map((f) => JSON.parse(f.data) as EventData);
    assert.equal(events.at(-1)?.status, "completed");
    started.push(events[0]);
  }
  for (const event of started) {
    const session = event.session_id as string;
    const run = event.run_id as string;
    assert.match(session, V7);
    assert.match(run, V7);
    const messages = await (await t.fetch(`/v1/sessions/${session}/messages`)).json();
    assert.equal(messages.items.length, 2);
    for (const m of messages.items) assert.match(m.message_id, V7);
    const record = await (await t.fetch(`/v1/runs/${run}`)).json();
    assert.match(record.checkpoint_id, V7);
  }
  // The second run was started after the first had ended: its ids carry a later or the same ms.
  assert.ok(millis(started[1].run_id as string) >= millis(started[0].run_id as string));
  assert.ok(millis(started[1].session_id as string) >= millis(started[0].session_id as string));
});
