/**
 * The foundation endpoints over real HTTP, against SQLite and PostgreSQL: sessions, messages,
 * checkpoints, run reads, health, tenancy, and the table of bad inputs.
 */
import assert from "node:assert/strict";
import {
  assertError,
  skipNotice,
  startTestServer,
  storeKinds,
  testPostgresUrl,
  type TestServer,
} from "../_kit/mod.ts";

if (!testPostgresUrl) skipNotice("the PostgreSQL HTTP suite", "AGENTD_TEST_POSTGRES_URL");

async function json(res: Response): Promise<Record<string, unknown>> {
  const text = await res.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`not JSON (status ${res.status}): ${text.slice(0, 200)}`);
  }
}

async function counts(t: TestServer, tenant = "default") {
  const sessions = await json(await t.fetch("/v1/sessions", { tenant }));
  return sessions.count as number;
}

for (const kind of storeKinds) {
  Deno.test(`v1 foundation (${kind})`, async (tt) => {
    await using t = await startTestServer({ store: kind });
    await tt.step("health endpoints", async () => {
      const h = await t.fetch("/healthz");
      assert.equal(h.status, 200);
      assert.deepEqual(await h.json(), { status: "ok" });
      const r = await t.fetch("/readyz");
      assert.equal(r.status, 200);
      assert.equal((await r.json()).store, kind);
    });

    await tt.step("sessions: create, read, list, paginate, delete", async () => {
      const created = await t.fetch("/v1/sessions", {
        method: "POST",
        json: { session_id: "s1" },
      });
      assert.equal(created.status, 201);
      const s1 = await json(created);
      assert.equal(s1.session_id, "s1");
      assert.match(String(s1.created_at), /^\d{4}-\d{2}-\d{2}T/);
      await assertError(
        await t.fetch("/v1/sessions", { method: "POST", json: { session_id: "s1" } }),
        409001,
      );
      const gen = await json(await t.fetch("/v1/sessions", { method: "POST" }));
      assert.equal(typeof gen.session_id, "string");
      const withMeta = await json(
        await t.fetch("/v1/sessions", { method: "POST", json: { metadata: { a: 1 } } }),
      );
      assert.deepEqual(withMeta.metadata, { a: 1 });
      const got = await json(await t.fetch("/v1/sessions/s1"));
      assert.equal(got.session_id, "s1");
      const page1 = await json(await t.fetch("/v1/sessions?per_page=2"));
      assert.equal(page1.count, 3);
      assert.equal((page1.items as unknown[]).length, 2);
      assert.equal(typeof page1.next_page, "string");
      // Rows inserted while paging do not disturb the cursor.
      await t.fetch("/v1/sessions", { method: "POST", json: { session_id: "s-late" } });
      const page2 = await json(
        await t.fetch(
          `/v1/sessions?per_page=2&page=${encodeURIComponent(String(page1.next_page))}`,
        ),
      );
      const ids = [
        ...(page1.items as { session_id: string }[]),
        ...(page2.items as { session_id: string }[]),
      ]
        .map((s) => s.session_id);
      assert.equal(new Set(ids).size, 4);
      assert.equal(page2.next_page, null);
      const del = await t.fetch(`/v1/sessions/${gen.session_id}`, { method: "DELETE" });
      assert.equal(del.status, 204);
      await assertError(await t.fetch(`/v1/sessions/${gen.session_id}`), 404001);
      await assertError(
        await t.fetch(`/v1/sessions/${gen.session_id}`, { method: "DELETE" }),
        404001,
      );
    });

    await tt.step("messages: create, list, read, delete", async () => {
      const m1 = await t.fetch("/v1/sessions/s1/messages", {
        method: "POST",
        json: { role: "user", content: [{ type: "text", value: "hello" }] },
      });
      assert.equal(m1.status, 201);
      const first = await json(m1);
      assert.equal(first.role, "user");
      assert.deepEqual(first.content, [{ type: "text", value: "hello" }]);
      const m2 = await json(
        await t.fetch("/v1/sessions/s1/messages", {
          method: "POST",
          json: {
            message_id: "m-2",
            role: "assistant",
            content: [{ type: "text", value: "hi" }],
          },
        }),
      );
      assert.equal(m2.message_id, "m-2");
      await assertError(
        await t.fetch("/v1/sessions/s1/messages", {
          method: "POST",
          json: { message_id: "m-2", role: "user", content: [] },
        }),
        409005,
      );
      const all = await json(await t.fetch("/v1/sessions/s1/messages"));
      assert.equal(all.count, 2);
      assert.deepEqual(
        (all.items as { message_id: string }[]).map((m) => m.message_id),
        [first.message_id, "m-2"],
      );
      const one = await json(await t.fetch("/v1/sessions/s1/messages/m-2"));
      assert.equal(one.message_id, "m-2");
      assert.equal(
        (await t.fetch("/v1/sessions/s1/messages/m-2", { method: "DELETE" })).status,
        204,
      );
      await assertError(await t.fetch("/v1/sessions/s1/messages/m-2"), 404003);
      await assertError(
        await t.fetch("/v1/sessions/s1/messages/m-2", { method: "DELETE" }),
        404003,
      );
      await assertError(await t.fetch("/v1/sessions/nope/messages"), 404001);
      await assertError(
        await t.fetch("/v1/sessions/nope/messages", {
          method: "POST",
          json: { role: "user", content: [] },
        }),
        404001,
      );
    });

    await tt.step("checkpoints list", async () => {
      const cps = await json(await t.fetch("/v1/sessions/s1/checkpoints"));
      assert.deepEqual(cps, { items: [], count: 0, next_page: null });
      await assertError(await t.fetch("/v1/sessions/nope/checkpoints"), 404001);
    });

    await tt.step(
      "checkpoints: read one by id, the latest run's is the session's state",
      async () => {
        const res = await t.fetch("/v1/runs", {
          method: "POST",
          json: {
            session_id: "with-state",
            context: { city: "Lyon" },
            messages: [{ role: "user", content: [{ type: "text", value: "hello" }] }],
          },
        });
        await res.text();
        const runs = await json(await t.fetch("/v1/sessions/with-state/runs"));
        const run = (runs.items as Record<string, unknown>[]).at(-1)!;
        const listed = await json(await t.fetch("/v1/sessions/with-state/checkpoints"));
        const latest = (listed.items as Record<string, unknown>[]).at(-1)!;
        assert.equal(run.checkpoint_id, latest.checkpoint_id);
        const path = `/v1/sessions/with-state/checkpoints/${run.checkpoint_id}`;
        assert.deepEqual(await json(await t.fetch(path)), latest);
        await assertError(await t.fetch("/v1/sessions/with-state/checkpoints/nope"), 404004);
        await assertError(
          await t.fetch(`/v1/sessions/s1/checkpoints/${run.checkpoint_id}`),
          404004,
        );
        await assertError(await t.fetch(path, { tenant: "other" }), 404001);
        await assertError(await t.fetch(`${path}?zz=1`), 422000);
      },
    );

    await tt.step("runs: read and list with every filter", async () => {
      const store = t.server.store;
      await store.createRun("default", {
        run_id: "r1",
        session_id: "s1",
        parent_checkpoint_id: null,
        owner: "test",
      });
      await store.finishRun("r1", { status: "completed", result: "ok" });
      // Records before and after `middle` are 15 ms apart on the server's clock.
      t.clock.advance(15);
      const middle = t.clock.iso();
      t.clock.advance(15);
      await store.createRun("default", {
        run_id: "r2",
        session_id: "s1",
        parent_checkpoint_id: null,
        owner: "test",
      });
      await store.finishRun("r2", { status: "failed", error: { code: "x", message: "y" } });
      const run = await json(await t.fetch("/v1/runs/r1"));
      assert.equal(run.run_id, "r1");
      assert.equal(run.status, "completed");
      assert.equal(run.session_id, "s1");
      await assertError(await t.fetch("/v1/runs/nope"), 404002);
      await assertError(await t.fetch("/v1/runs/r1", { tenant: "other" }), 404002);

      const ids = async (q: string) =>
        ((await json(await t.fetch(`/v1/sessions/s1/runs${q}`))).items as { run_id: string }[])
          .map((r) => r.run_id);
      assert.deepEqual(await ids(""), ["r1", "r2"]);
      assert.deepEqual(await ids("?statuses=failed"), ["r2"]);
      assert.deepEqual(await ids("?statuses=failed,completed"), ["r1", "r2"]);
      assert.deepEqual(await ids("?ids=r1&ids=r2&statuses=completed"), ["r1"]);
      assert.deepEqual(await ids("?session_ids=s1"), ["r1", "r2"]);
      assert.deepEqual(await ids("?session_ids=other"), []);
      assert.deepEqual(await ids(`?created_before=${middle}`), ["r1"]);
      assert.deepEqual(await ids(`?created_after=${middle}`), ["r2"]);
      assert.deepEqual(await ids(`?updated_after=${middle}`), ["r2"]);
      assert.deepEqual(await ids(`?updated_before=${middle}`), ["r1"]);
      const p = await json(await t.fetch("/v1/sessions/s1/runs?per_page=1"));
      assert.equal(p.count, 2);
      const p2 = await json(
        await t.fetch(`/v1/sessions/s1/runs?per_page=1&page=${p.next_page}`),
      );
      assert.equal((p2.items as { run_id: string }[])[0].run_id, "r2");
      await assertError(await t.fetch("/v1/sessions/nope/runs"), 404001);
    });

    await tt.step("tenancy: data is scoped per X-Tenant-ID", async () => {
      await assertError(await t.fetch("/v1/sessions/s1", { tenant: "acme" }), 404001);
      const mine = await t.fetch("/v1/sessions", {
        method: "POST",
        tenant: "acme",
        json: { session_id: "s1" },
      });
      assert.equal(mine.status, 201, "same id in another tenant is a different session");
      assert.equal(await counts(t, "acme"), 1);
      await assertError(await t.fetch("/v1/sessions/s1/messages/x", { tenant: "acme" }), 404003);
      await assertError(await t.fetch("/v1/sessions", { tenant: "" }), 400002);
      await assertError(await t.fetch("/v1/sessions", { tenant: "x".repeat(129) }), 400002);
      await assertError(await t.fetch("/v1/sessions", { tenant: "a b" }), 400002);
    });

    await tt.step("bad input table: right status, right shape, nothing written", async () => {
      const before = await counts(t);
      const beforeMessages = (await json(await t.fetch("/v1/sessions/s1/messages"))).count;
      const post = (path: string, init: RequestInit & { json?: unknown }) =>
        t.fetch(path, { method: "POST", ...init });
      // Each case's status is its code's first three digits (assertError checks both).
      const cases: [string, () => Promise<Response>, number][] = [
        [
          "malformed JSON",
          () =>
            post("/v1/sessions", {
              body: "{nope",
              headers: { "content-type": "application/json" },
            }),
          400001,
        ],
        [
          "wrong content type",
          () => post("/v1/sessions", { body: "{}", headers: { "content-type": "text/plain" } }),
          415001,
        ],
        ["wrong type", () => post("/v1/sessions", { json: { session_id: 5 } }), 422000],
        ["unknown field", () => post("/v1/sessions", { json: { nope: 1 } }), 422000],
        ["bad id", () => post("/v1/sessions", { json: { session_id: "a/b" } }), 422000],
        [
          "missing role",
          () => post("/v1/sessions/s1/messages", { json: { content: [] } }),
          422000,
        ],
        [
          "bad part",
          () =>
            post("/v1/sessions/s1/messages", {
              json: { role: "user", content: [{ type: "text" }] },
            }),
          422000,
        ],
        ["per_page 0", () => t.fetch("/v1/sessions?per_page=0"), 422000],
        ["per_page 1001", () => t.fetch("/v1/sessions?per_page=1001"), 422000],
        ["per_page abc", () => t.fetch("/v1/sessions?per_page=abc"), 422000],
        ["bad cursor", () => t.fetch("/v1/sessions?page=garbage"), 422000],
        [
          "bad timestamp",
          () => t.fetch("/v1/sessions/s1/runs?created_after=yesterday"),
          422000,
        ],
        ["bad status", () => t.fetch("/v1/sessions/s1/runs?statuses=done"), 422000],
        ["unknown query", () => t.fetch("/v1/sessions?perpage=5"), 422000],
        ["unknown route", () => t.fetch("/v1/nothing"), 404005],
        ["wrong method", () => t.fetch("/v1/sessions/s1", { method: "PATCH" }), 405001],
        [
          "oversized body",
          () =>
            post("/v1/sessions", {
              json: { metadata: { big: "x".repeat(2_000_000) } },
            }),
          413001,
        ],
      ];
      for (const [name, call, code] of cases) {
        try {
          await assertError(await call(), code);
        } catch (e) {
          throw new Error(`${name}: ${(e as Error).message}`);
        }
      }
      const pp = await json(await t.fetch("/v1/sessions?per_page=0"));
      const typed = await json(
        await t.fetch("/v1/sessions", { method: "POST", json: { session_id: 5 } }),
      );
      assert.equal((typed.fields as { errors: { code: string }[] }[])[0].errors[0].code, "type");
      const missing = await json(
        await t.fetch("/v1/sessions/s1/messages", { method: "POST", json: { content: [] } }),
      );
      assert.deepEqual(
        (missing.fields as { field: string; errors: { code: string }[] }[])[0],
        { field: "role", errors: [{ code: "required", message: "is required" }] },
      );
      assert.deepEqual(pp.fields, [{
        field: "per_page",
        errors: [{
          code: "range",
          message: "must be an integer from 1 to 1000",
          params: { min: 1, max: 1000 },
        }],
      }]);
      // The paging schema parses the query: an empty cursor is the first page, a repeated value
      // counts once (the last), unknown parameters are named alone with the known ones.
      const all = await json(await t.fetch("/v1/sessions"));
      assert.ok((all.items as unknown[]).length > 1);
      assert.deepEqual(await json(await t.fetch("/v1/sessions?page=")), all);
      const repeated = await json(await t.fetch("/v1/sessions?per_page=1000&per_page=1"));
      assert.equal((repeated.items as unknown[]).length, 1);
      const unknown = await json(await t.fetch("/v1/sessions?per_page=0&perpage=5"));
      assert.deepEqual(unknown.fields, [{
        field: "perpage",
        errors: [{
          code: "unknown_field",
          message: "unknown query parameter; known: per_page,page",
        }],
      }]);
      const wm = await t.fetch("/v1/sessions/s1", { method: "PATCH" });
      assert.match(wm.headers.get("allow") ?? "", /GET/);
      await wm.body?.cancel();
      assert.equal(await counts(t), before, "no session written");
      assert.equal(
        (await json(await t.fetch("/v1/sessions/s1/messages"))).count,
        beforeMessages,
        "no message written",
      );
    });

    await tt.step("request id is echoed", async () => {
      const res = await t.fetch("/healthz", { headers: { "x-request-id": "abc-123" } });
      await res.body?.cancel();
      assert.equal(res.headers.get("x-request-id"), "abc-123");
    });
  });
}
