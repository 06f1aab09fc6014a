/**
 * The native run API over real HTTP, on SQLite and PostgreSQL: attached and detached runs,
 * validation, conflicts, cancel, re-attach, client drops and keep-alives.
 */
import assert from "node:assert/strict";
import {
  assertError,
  type EventData,
  eventually,
  openTestStore,
  pacedModel,
  readEvents,
  readSse,
  startTestServer,
  storeKinds,
  type TestServer,
  userText,
} from "../_kit/mod.ts";

async function runStatus(t: TestServer, id: string, tenant?: string): Promise<string> {
  const res = await t.fetch(`/v1/runs/${id}`, { tenant });
  const body = await res.json();
  return body.status;
}

/** The re-attach grace of the suite's servers (ms): short, the runs last longer. */
const GRACE = 300;

function statusBecomes(t: TestServer, id: string, status: string, timeout = 5000) {
  return eventually(async () => (await runStatus(t, id)) === status, {
    timeout,
    what: `run ${id} to be ${status}`,
  });
}

for (const kind of storeKinds) {
  Deno.test(`runs over HTTP (${kind})`, async (tt) => {
    await using t = await startTestServer({
      store: kind,
      manifest: {
        http_server: { keepalive: 40 },
        runtime: { attached: { reattach_grace: GRACE } },
      },
    });
    await tt.step("attached run streams the spec's event order", async () => {
      const res = await t.fetch("/v1/runs", {
        method: "POST",
        json: { session_id: "a1", run_id: "run-a1", messages: [userText("hello brave new world")] },
      });
      assert.equal(res.status, 200);
      assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
      const frames = await readSse(res).all();
      const events = frames.map((f) => JSON.parse(f.data) as EventData);
      for (const [i, f] of frames.entries()) assert.equal(f.event, events[i].kind);
      const kinds = events.map((e) => e.kind).filter((k) => !k.startsWith("step_"));
      assert.equal(kinds[0], "run_started");
      assert.equal(kinds[1], "messages_snapshot");
      assert.equal(kinds.at(-1), "run_finished");
      const start = kinds.indexOf("text_message_start");
      const end = kinds.indexOf("text_message_end");
      assert.ok(start > 1 && end > start);
      assert.ok(kinds.slice(start + 1, end).every((k) => k === "text_message_content"));
      const deltas = events.filter((e) => e.kind === "text_message_content")
        .map((e) => e.delta).join("");
      assert.equal(deltas, "hello brave new world");
      for (const e of events) {
        assert.equal(typeof e.timestamp, "number");
        assert.ok(Math.abs((e.timestamp as number) - Date.now() / 1000) < 60);
      }
      const started = events[0];
      assert.equal(started.session_id, "a1");
      assert.equal(started.run_id, "run-a1");
      const finished = events.at(-1)!;
      assert.equal(finished.status, "completed");
      assert.equal(finished.interrupt_payload, null);
      assert.deepEqual((finished.result as { text: string }).text, "hello brave new world");
      const run = await (await t.fetch("/v1/runs/run-a1")).json();
      assert.equal(run.status, "completed");
      const messages = await (await t.fetch("/v1/sessions/a1/messages")).json();
      assert.deepEqual(
        messages.items.map((m: { role: string }) => m.role),
        ["user", "assistant"],
      );
    });

    await tt.step("a second run continues the session", async () => {
      const res = await t.fetch("/v1/runs", {
        method: "POST",
        json: { session_id: "a1", messages: [userText("again")] },
      });
      const events = await readEvents(res);
      const snapshot = events.find((e) => e.kind === "messages_snapshot")!;
      assert.equal((snapshot.messages as unknown[]).length, 3);
      const runs = await (await t.fetch("/v1/sessions/a1/runs")).json();
      assert.equal(runs.count, 2);
    });

    await tt.step("validation and conflicts, nothing written", async () => {
      const post = (json: unknown) => t.fetch("/v1/runs", { method: "POST", json });
      await assertError(await post({ messages: [] }), 422000, { field: "messages" });
      await assertError(await post({}), 422000, { field: "messages" });
      await assertError(
        await post({ messages: [userText("x")], capability_override: { strategy: "merge" } }),
        422000,
        { field: "capability_override.strategy" },
      );
      await assertError(
        await post({
          messages: [userText("x")],
          model: { retry: { max_attempts: 0, initial_backoff: 10, max_backoff: 5 } },
        }),
        422000,
        { field: "model.retry.max_attempts" },
      );
      await assertError(
        await post({ messages: [{ role: "user", content: [{ type: "text", value: 1 }] }] }),
        422000,
        { field: "messages.0.content.0.value" },
      );
      await assertError(
        await post({ session_id: "fresh", messages: [userText("x")], checkpoint_id: "nope" }),
        404004,
      );
      await assertError(await post({ run_id: "run-a1", messages: [userText("x")] }), 409002);
      await assertError(
        await t.fetch("/v1/runs/start", { method: "POST", json: { messages: "x" } }),
        422000,
        { field: "messages" },
      );
      const fresh = await t.fetch("/v1/sessions/fresh");
      await fresh.body?.cancel();
      assert.equal(fresh.status, 404, "a refused run leaves no session behind");
    });

    await tt.step("detached run: 202 with ids, runs in the background", async () => {
      const res = await t.fetch("/v1/runs/start", {
        method: "POST",
        json: { messages: [userText("detached hello")] },
      });
      assert.equal(res.status, 202);
      const body = await res.json();
      assert.deepEqual(Object.keys(body).sort(), ["run_id", "session_id"]);
      assert.equal(res.headers.get("location"), `/v1/runs/${body.run_id}`);
      await statusBecomes(t, body.run_id, "completed");
    });

    await tt.step("one running run per session: 409003", async () => {
      const first = await (await t.fetch("/v1/runs/start", {
        method: "POST",
        json: {
          session_id: "busy",
          messages: [userText("a b c d e f g h")],
          model: pacedModel(100),
        },
      })).json();
      await assertError(
        await t.fetch("/v1/runs/start", {
          method: "POST",
          json: { session_id: "busy", messages: [userText("x")] },
        }),
        409003,
      );
      await assertError(await t.fetch("/v1/sessions/busy", { method: "DELETE" }), 409003);
      await assertError(
        await t.fetch("/v1/sessions/busy/messages", {
          method: "POST",
          json: userText("sneaky"),
        }),
        409003,
      );
      assert.equal(
        (await t.fetch(`/v1/runs/${first.run_id}/cancel`, { method: "PUT" })).status,
        204,
      );
      await statusBecomes(t, first.run_id, "cancelled");
    });

    await tt.step("cancel: 204 running and terminal, 404 unknown and other tenant", async () => {
      const { run_id } = await (await t.fetch("/v1/runs/start", {
        method: "POST",
        json: { messages: [userText("one two three four five six")], model: pacedModel(200) },
      })).json();
      await assertError(
        await t.fetch(`/v1/runs/${run_id}/cancel`, { method: "PUT", tenant: "other" }),
        404002,
      );
      const c1 = await t.fetch(`/v1/runs/${run_id}/cancel`, { method: "PUT" });
      assert.equal(c1.status, 204);
      assert.equal(await c1.text(), "");
      await statusBecomes(t, run_id, "cancelled", 2000);
      const c2 = await t.fetch(`/v1/runs/${run_id}/cancel`, { method: "PUT" });
      assert.equal(c2.status, 204);
      await c2.body?.cancel();
      assert.equal(await runStatus(t, run_id), "cancelled");
      await assertError(await t.fetch("/v1/runs/nope/cancel", { method: "PUT" }), 404002);
      const done = await t.fetch("/v1/runs/run-a1/cancel", { method: "PUT" });
      assert.equal(done.status, 204);
      await done.body?.cancel();
      assert.equal(await runStatus(t, "run-a1"), "completed", "a terminal run is unchanged");
    });

    await tt.step("re-attach: live events from the attach point, 409 when done", async () => {
      const { run_id } = await (await t.fetch("/v1/runs/start", {
        method: "POST",
        json: { messages: [userText("w1 w2 w3 w4 w5 w6 w7 w8")], model: pacedModel(60) },
      })).json();
      // Past its first events: a first subscriber has seen text.
      await using first = readSse(await t.fetch(`/v1/runs/${run_id}/events`));
      await first.until("text_message_content");
      await assertError(await t.fetch(`/v1/runs/${run_id}/events`, { tenant: "other" }), 404002);
      const res = await t.fetch(`/v1/runs/${run_id}/events`);
      assert.equal(res.status, 200);
      const events = await readEvents(res);
      assert.equal(events[0].kind === "run_started", false, "earlier events are not replayed");
      assert.equal(events.at(-1)!.kind, "run_finished");
      assert.equal(events.at(-1)!.status, "completed");
      assert.ok(events.some((e) => e.kind === "text_message_content"));
      await assertError(await t.fetch(`/v1/runs/${run_id}/events`), 409004);
      await assertError(await t.fetch("/v1/runs/nope/events"), 404002);
    });

    await tt.step("dropping a re-attach stream leaves the run running", async () => {
      const { run_id } = await (await t.fetch("/v1/runs/start", {
        method: "POST",
        json: { messages: [userText("a b c d e f")], model: pacedModel(50) },
      })).json();
      const res = await t.fetch(`/v1/runs/${run_id}/events`);
      const it = readSse(res);
      await it.next();
      await it.cancel();
      await statusBecomes(t, run_id, "completed");
    });

    await tt.step("dropping a detached start request changes nothing", async () => {
      const controller = new AbortController();
      const res = await t.fetch("/v1/runs/start", {
        method: "POST",
        json: { session_id: "dropped", messages: [userText("a b c d")], model: pacedModel(50) },
        signal: controller.signal,
      });
      controller.abort();
      await res.body?.cancel().catch(() => {});
      const runs = await eventually(async () => {
        const page = await (await t.fetch("/v1/sessions/dropped/runs")).json();
        return page.count === 1 ? page.items[0] : undefined;
      }, { what: "the run record" });
      await statusBecomes(t, runs.run_id, "completed");
    });

    await tt.step("a client back within the re-attach grace keeps its run", async () => {
      const words = "1 2 3 4 5 6 7 8 9 10 11 12";
      const res = await t.fetch("/v1/runs", {
        method: "POST",
        json: { messages: [userText(words)], model: pacedModel(100) },
      });
      const runId = res.headers.get("x-run-id")!;
      const first = readSse(res);
      await first.until("text_message_content");
      await first.cancel();
      // Back by cursor, on this replica (tests/faults/reattach_test.ts: across replicas).
      const again = await t.fetch(`/v1/runs/${runId}/events`, {
        headers: { "last-event-id": first.events.at(-1)!.id! },
      });
      const rest = await readSse(again).all();
      assert.equal(JSON.parse(rest.at(-1)!.data).status, "completed");
      const answer = [...first.events, ...rest].filter((e) => e.event === "text_message_content")
        .map((e) => JSON.parse(e.data).delta).join("");
      assert.equal(answer, words);
      assert.equal(await runStatus(t, runId), "completed");
    });

    await tt.step("dropping the attached stream cancels the run after the grace", async () => {
      const res = await t.fetch("/v1/runs", {
        method: "POST",
        json: {
          session_id: "drop-attached",
          messages: [userText("1 2 3 4 5 6 7 8 9 10 11 12")],
          model: pacedModel(100),
        },
      });
      const runId = res.headers.get("x-run-id")!;
      const it = readSse(res);
      await it.next();
      await it.cancel();
      await statusBecomes(t, runId, "cancelled", 3000);
      const page = await (await t.fetch("/v1/sessions/drop-attached/runs")).json();
      assert.equal(page.items[0].status, "cancelled");
    });

    await tt.step("keep-alive comments separate events", async () => {
      const res = await t.fetch("/v1/runs", {
        method: "POST",
        json: { messages: [userText("slow words here")], model: pacedModel(120) },
      });
      const reader = readSse(res);
      await reader.all();
      const comments = reader.comments.filter((c) => c.text === "keep-alive").length;
      assert.ok(comments >= 2, `saw ${comments} keep-alive comments`);
    });
  });
}

Deno.test("a slow re-attach subscriber is dropped without slowing the run", async () => {
  await using t = await startTestServer({
    manifest: {
      // One 16 MB message: past the body and message caps' defaults.
      runtime: { pubsub: { capacity: 8 }, max_message_bytes: 32 * 2 ** 20 },
      http_server: { max_body_bytes: 64 * 2 ** 20 },
    },
  });
  // 1,000 tokens of 16 KiB: far more than the kernel's socket buffers absorb.
  const words = Array.from({ length: 1000 }, (_, i) => `w${i}${"x".repeat(16_384)}`).join(" ");
  const { run_id } = await (await t.fetch("/v1/runs/start", {
    method: "POST",
    json: { messages: [userText(words)], model: pacedModel(2) },
  })).json();
  // Attach, then read nothing while the run streams its tokens.
  const res = await t.fetch(`/v1/runs/${run_id}/events`);
  assert.equal(res.status, 200);
  await statusBecomes(t, run_id, "completed", 60_000);
  // Now read what the slow subscriber got: a prefix, then the end notice, no run_finished.
  const reader = readSse(res);
  const events = await reader.all();
  const last = reader.comments.filter((c) => c.text !== "keep-alive").at(-1)!;
  assert.equal(last.text, "stream ended: subscriber_overflow");
  assert.equal(last.after, events.length, "the notice comes after the last event");
  assert.ok(!events.some((e) => e.event === "run_finished"));
  assert.ok(events.length < 1000);
});

Deno.test("graceful shutdown: not ready, refuses runs, hands over what outlives the grace", async () => {
  await using t = await startTestServer();
  const { run_id } = await (await t.fetch("/v1/runs/start", {
    method: "POST",
    json: {
      session_id: "drain",
      messages: [userText("a b c d e f g h i j k l m n o p")],
      model: pacedModel(100),
    },
  })).json();
  // shutdown() stops accepting runs before it returns its promise.
  const stopping = t.server.shutdown(500);
  await assertError(await t.fetch("/readyz"), 503002);
  await assertError(
    await t.fetch("/v1/runs/start", { method: "POST", json: { messages: [userText("late")] } }),
    503002,
  );
  await stopping;
  const path = t.config.manifest.runtime.storage.path!;
  {
    await using fx = await openTestStore("sqlite", { shared: { path } });
    const run = await fx.store.getRun("default", run_id);
    assert.equal(run?.status, "running", "handed over, not interrupted");
    assert.equal(run?.attempt, 1);
    const messages = await fx.store.allMessages("default", "drain");
    assert.deepEqual(messages.map((m) => m.role), ["user"], "the lost step wrote nothing");
  }
  // SQLite is one process: the next start resumes it as attempt 2, which completes it.
  await using again = await startTestServer({ shared: { path } });
  const done = await eventually(async () => {
    const res = await again.fetch(`/v1/runs/${run_id}`);
    const run = await res.json();
    return run.status !== "running" && run;
  }, { timeout: 15_000, what: "the resumed run to end" });
  assert.equal(done.status, "completed");
  assert.equal(done.attempt, 2);
  // Resumed as a hand-over, not as a lost run.
  const metrics = await (await again.fetch("/metrics")).text();
  assert.match(metrics, /^agentd_runs_resumed_total\{reason="handoff"\} 1$/m);
  assert.match(metrics, /^agentd_runs_resumed_total\{reason="lost"\} 0$/m);
  const res = await again.fetch("/v1/sessions/drain/messages");
  const { items } = await res.json();
  assert.deepEqual(items.map((m: { role: string }) => m.role), ["user", "assistant"]);
  assert.equal(items[1].content[0].value, "a b c d e f g h i j k l m n o p");
});
