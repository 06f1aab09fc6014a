/**
 * Double texting over AG-UI (`forwardedProps.multitask_strategy`), driven by the official client
 * (`@ag-ui/client` HttpAgent): a second client sends to a thread whose run is going, and each
 * strategy does to that run what docs/api.md says. Every stream is checked (helpers.ts).
 */
import assert from "node:assert/strict";
import { HttpAgent } from "@ag-ui/client";
import type { Message, Run } from "../../../src/api/schemas.ts";
import {
  assertError,
  pacedModel,
  readSse,
  startTestServer,
  storeKinds,
  type TestServer,
} from "../../_kit/mod.ts";
import { RecordingFetch, type WireEvent } from "./helpers.ts";

const manifest = {
  agent: { name: "ag-ui-multitask", model: { provider: "echo" } },
  http_server: { protocol: { ag_ui: {} } },
};
const LONG = Array.from({ length: 20 }, (_, i) => `w${i + 1}`).join(" ");

async function getJson<T>(t: TestServer, path: string): Promise<T> {
  const res = await t.fetch(path);
  assert.equal(res.status, 200, path);
  return await res.json() as T;
}

const textOf = (m: Message) =>
  m.content.map((p) => p.type === "text" ? p.value : "").join("").trim();

/** A client of the thread, holding only the message it sends. */
function client(t: TestServer, recorder: RecordingFetch, threadId: string, content: string) {
  const agent = new HttpAgent({ url: `${t.url}/ag-ui/run`, fetch: recorder.fetch, threadId });
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content });
  return agent;
}

/** Runs `agent`, collecting the events its subscriber sees. */
async function run(agent: HttpAgent, forwardedProps: Record<string, unknown>) {
  const events: WireEvent[] = [];
  await agent.runAgent({ forwardedProps }, {
    onEvent: ({ event }) => {
      events.push(event as WireEvent);
    },
  });
  return events;
}

/** Starts a long run on a new thread; resolves once its answer streams, with its run. */
async function busyThread(t: TestServer, recorder: RecordingFetch, threadId: string) {
  const first = run(client(t, recorder, threadId, LONG), { model: pacedModel(60) });
  const running = await (async () => {
    while (true) {
      const page = await t.fetch(`/v1/sessions/${threadId}/runs?statuses=running`);
      if (page.status === 200) {
        const [r] = (await page.json()).items as Run[];
        if (r) return r;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  await using sse = readSse(await t.fetch(`/v1/runs/${running.run_id}/events?after=0`));
  await sse.until("text_message_content");
  return { run: running, events: first };
}

for (const store of storeKinds) {
  Deno.test(`AG-UI multitask (${store})`, async (tt) => {
    await using t = await startTestServer({ store, manifest });
    const recorder = new RecordingFetch();

    await tt.step("reject (the default): the second run is refused", async () => {
      const first = await busyThread(t, recorder, "agui-reject");
      await assert.rejects(run(client(t, recorder, "agui-reject", "again"), {}), /409/);
      await t.fetch(`/v1/runs/${first.run.run_id}/cancel`, { method: "PUT" });
      await first.events;
    });

    await tt.step("an unknown strategy is a 422 naming forwardedProps", async () => {
      const res = await t.fetch("/ag-ui/run", {
        method: "POST",
        json: {
          threadId: "agui-bad",
          messages: [{ id: "m1", role: "user", content: "x" }],
          forwardedProps: { multitask_strategy: "later" },
        },
      });
      await assertError(res, 422000, { field: "forwardedProps.multitask_strategy" });
    });

    for (const strategy of ["enqueue", "interrupt", "rollback"] as const) {
      await tt.step(strategy, async () => {
        const thread = `agui-${strategy}`;
        const first = await busyThread(t, recorder, thread);
        const second = await run(client(t, recorder, thread, "instead"), {
          multitask_strategy: strategy,
        });
        assert.equal(second.at(-1)?.type, "RUN_FINISHED");
        await first.events;
        const before = await getJson<Run>(t, `/v1/runs/${first.run.run_id}`);
        assert.equal(before.status, strategy === "enqueue" ? "completed" : "cancelled");
        const { items } = await getJson<{ items: Message[] }>(
          t,
          `/v1/sessions/${thread}/messages`,
        );
        const texts = items.map(textOf);
        if (strategy === "enqueue") assert.deepEqual(texts, [LONG, LONG, "instead", "instead"]);
        if (strategy === "rollback") assert.deepEqual(texts, ["instead", "instead"]);
        if (strategy === "interrupt") {
          assert.deepEqual(items.map((m) => m.role), ["user", "assistant", "user", "assistant"]);
          assert.ok(LONG.startsWith(texts[1]) && texts[1] !== LONG);
        }
      });
    }

    await tt.step("steer: the message joins the running run before its answer", async () => {
      const first = await busyThread(t, recorder, "agui-steer");
      const second = await run(client(t, recorder, "agui-steer", "and also this"), {
        multitask_strategy: "steer",
      });
      // The second client is given the run it joined, to its end.
      assert.equal(second[0].type, "RUN_STARTED");
      assert.equal(second[0].runId, first.run.run_id);
      assert.equal(second.at(-1)?.type, "RUN_FINISHED");
      // The first client sees the new user message in its stream, then the answer to it.
      const events = await first.events;
      const userStart = events.findIndex((e) =>
        e.type === "TEXT_MESSAGE_START" && e.role === "user"
      );
      assert.ok(userStart > 0, "a user message in the first stream");
      const answer = events.slice(userStart).filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
        .map((e) => e.delta).join("");
      assert.match(answer, /and also this/);
      const done = await getJson<Run>(t, `/v1/runs/${first.run.run_id}`);
      assert.equal(done.status, "completed");
      const { items } = await getJson<{ items: Message[] }>(t, `/v1/sessions/agui-steer/messages`);
      assert.deepEqual(items.map((m) => [m.role, textOf(m)]), [
        ["user", LONG],
        ["assistant", LONG],
        ["user", "and also this"],
        ["assistant", "and also this"],
      ]);
      assert.ok(items.every((m) => m.run_id === first.run.run_id));
    });

    await recorder.checkAll();
  });
}
