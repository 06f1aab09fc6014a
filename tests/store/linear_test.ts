/**
 * Linear storage: a session's checkpoints reference its conversation instead of copying it, so
 * their bytes grow with the number of turns, not with its square. Real runs through the HTTP API
 * (echo model), the on-disk size of each table with its indexes measured after 250 and after
 * 1,000 turns of one session.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import postgres from "postgres";
import {
  slowTest,
  startTestServer,
  storeKinds,
  testPostgresUrl,
  type TestServer,
} from "../_kit/mod.ts";

/** Bytes on disk of the messages and checkpoints tables, each with its indexes. */
async function tableBytes(t: TestServer): Promise<{ messages: number; checkpoints: number }> {
  const storage = t.config.manifest.runtime.storage;
  if (storage.kind === "postgres") {
    const sql = postgres(testPostgresUrl!, { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql.unsafe(
        `SELECT pg_total_relation_size('"${storage.schema}".messages') AS messages,
          pg_total_relation_size('"${storage.schema}".checkpoints') AS checkpoints`,
      );
      return { messages: Number(row.messages), checkpoints: Number(row.checkpoints) };
    } finally {
      await sql.end();
    }
  }
  const db = new DatabaseSync(storage.path!, { readOnly: true });
  try {
    const rows = db.prepare(
      `SELECT s.tbl_name AS name, sum(d.pgsize) AS bytes FROM dbstat d
       JOIN sqlite_schema s ON s.name = d.name GROUP BY s.tbl_name`,
    ).all();
    const size = (name: string) => Number(rows.find((r) => r.name === name)?.bytes ?? 0);
    return { messages: size("messages"), checkpoints: size("checkpoints") };
  } finally {
    db.close();
  }
}

/** One turn: an attached run on the session, read to its end. */
async function turn(t: TestServer, n: number): Promise<void> {
  const res = await t.fetch("/v1/runs", {
    method: "POST",
    json: {
      session_id: "long",
      messages: [{
        role: "user",
        content: [{ type: "text", value: `turn ${n}: tell me one more thing about the weather` }],
      }],
    },
  });
  assert.equal(res.status, 200);
  const body = await res.text();
  assert.ok(body.includes('"status":"completed"'), `turn ${n} completed`);
}

for (const kind of storeKinds) {
  const name = `linear storage (${kind}): checkpoints grow with the turns, not their square`;
  slowTest(name, async () => {
    await using t = await startTestServer({ store: kind });
    const sizes: Record<number, { messages: number; checkpoints: number }> = {};
    for (let n = 1; n <= 1000; n++) {
      await turn(t, n);
      if (n === 250 || n === 1000) sizes[n] = await tableBytes(t);
    }
    const cps = await (await t.fetch("/v1/sessions/long/checkpoints?per_page=1")).json();
    assert.equal(cps.count, 1000, "one checkpoint a turn");
    const last = await (await t.fetch("/v1/sessions/long/messages?per_page=1")).json();
    assert.equal(last.count, 2000, "two messages a turn");

    // A page of checkpoints copies each one's conversation: 1,000 of them would be ~1M messages.
    // It is cut at 10,000 messages in all, and the next page goes on right after the cut.
    type Cp = { step: number; checkpoint_id: string; state: { messages: unknown[] } };
    const page = async (query: string) =>
      (await (await t.fetch(`/v1/sessions/long/checkpoints?${query}`)).json()) as {
        items: Cp[];
        count: number;
        next_page: string | null;
      };
    const total = (items: Cp[]) => items.reduce((n, cp) => n + cp.state.messages.length, 0);
    const first = await page("per_page=1000");
    assert.ok(first.items.length > 1 && first.items.length < 1000, `${first.items.length} items`);
    assert.ok(total(first.items) <= 10_000, `${total(first.items)} messages on the page`);
    assert.equal(first.count, 1000);
    assert.ok(first.next_page);
    const second = await page(`per_page=1000&page=${encodeURIComponent(first.next_page!)}`);
    assert.ok(total(second.items) <= 10_000, `${total(second.items)} messages on the page`);
    // One checkpoint a turn, steps counting on: nothing skipped or repeated at the cut.
    const steps = [...first.items, ...second.items].map((cp) => cp.step);
    assert.deepEqual(steps, steps.map((_, i) => steps[0] + i));

    console.log(`${kind}: bytes after 250 and 1000 turns`, sizes);
    // The quadratic copy needed ~16x the bytes for 4x the turns; a reference needs ~4x.
    assert.ok(
      sizes[1000].checkpoints <= 5 * sizes[250].checkpoints,
      `checkpoints grow linearly: ${JSON.stringify(sizes)}`,
    );
    assert.ok(
      sizes[1000].checkpoints <= 2 * sizes[1000].messages,
      `checkpoints take at most twice the bytes of the messages: ${JSON.stringify(sizes)}`,
    );
  });
}
