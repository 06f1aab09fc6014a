/**
 * Double texting over A2A (`metadata.multitask_strategy` of the request or the message), through
 * the official `@a2a-js/sdk` client: a message to a context whose task is working is refused
 * (the default), is queued behind it at once (`enqueue`: a submitted task), or cancels that task (`interrupt`, `rollback`).
 */
import assert from "node:assert/strict";
import { Role, TaskState } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import type { Message } from "../../../src/api/schemas.ts";
import {
  eventually,
  readSse,
  startTestServer,
  storeKinds,
  type TestServer,
} from "../../_kit/mod.ts";
import { SLOW_TEXT, slowManifest } from "./agents.ts";
import { asTask, clientFor, collect, message, rejects, request, text } from "./sdk.ts";

const textOf = (m: Message) =>
  m.content.map((p) => p.type === "text" ? p.value : "").join("").trim();

async function conversation(t: TestServer, contextId: string): Promise<Message[]> {
  const res = await t.fetch(`/v1/sessions/${contextId}/messages`);
  assert.equal(res.status, 200);
  return (await res.json()).items;
}

/** A task working on a long answer in a new context, its answer streaming. */
async function workingTask(t: TestServer, client: Client) {
  const task = asTask(
    await client.sendMessage(request(message([text(SLOW_TEXT)]), { returnImmediately: true })),
  );
  await using sse = readSse(await t.fetch(`/v1/runs/${task.id}/events?after=0`));
  await sse.until("text_message_content");
  return task;
}

for (const store of storeKinds) {
  Deno.test(`A2A multitask (${store})`, async (tt) => {
    await using t = await startTestServer({ store, manifest: slowManifest });
    const client = await clientFor(t, "HTTP+JSON");
    const cancel = (id: string) => client.cancelTask({ tenant: "", id, metadata: undefined });

    await tt.step("reject is the default: UnsupportedOperationError", async () => {
      const working = await workingTask(t, client);
      for (const metadata of [undefined, { multitask_strategy: "reject" }]) {
        await rejects(
          client.sendMessage(
            request(message([text("me too")], { contextId: working.contextId }), {}, {
              metadata,
            }),
          ),
          "UNSUPPORTED_OPERATION",
        );
      }
      await cancel(working.id);
    });

    await tt.step("an unknown strategy is InvalidParams", async () => {
      const e = await rejects(
        client.sendMessage(
          request(message([text("x")], { metadata: { multitask_strategy: "later" } })),
        ),
        "INVALID_PARAMS",
      );
      assert.match(e.message, /message\.metadata\.multitask_strategy/);
    });

    await tt.step("steer: the message joins the working task before its answer", async () => {
      const working = await workingTask(t, client);
      const joined = asTask(
        await client.sendMessage(
          request(message([text("and also this")], { contextId: working.contextId }), {}, {
            metadata: { multitask_strategy: "steer" },
          }),
        ),
      );
      assert.equal(joined.id, working.id);
      assert.equal(joined.status?.state, TaskState.TASK_STATE_COMPLETED);
      // Streamed, to the task by its id: the new message shows in the stream, then its answer.
      const again = await workingTask(t, client);
      const events = await collect(client.sendMessageStream(
        request(
          message([text("one more")], {
            taskId: again.id,
            metadata: { multitask_strategy: "steer" },
          }),
        ),
      ));
      const userUpdate = events.findIndex((e) =>
        e.payload?.$case === "statusUpdate" &&
        e.payload.value.status?.message?.role === Role.ROLE_USER
      );
      assert.ok(userUpdate > 0, "a status update with the user's message");
      const last = events.at(-1)?.payload;
      assert.equal(last?.$case, "statusUpdate");
      assert.equal(last.value.taskId, again.id);
      assert.equal(last.value.status?.state, TaskState.TASK_STATE_COMPLETED);
      for (const [task, said] of [[working, "and also this"], [again, "one more"]] as const) {
        const texts = (await conversation(t, task.contextId)).map(textOf);
        assert.deepEqual(texts, [SLOW_TEXT, SLOW_TEXT, said, said]);
      }
    });

    for (const strategy of ["enqueue", "interrupt", "rollback"] as const) {
      await tt.step(strategy, async () => {
        const working = await workingTask(t, client);
        // The message's metadata this time; the request's is read first.
        const second = asTask(
          await client.sendMessage(request(
            message([text("instead")], {
              contextId: working.contextId,
              metadata: { multitask_strategy: strategy },
            }),
          )),
        );
        assert.equal(second.status?.state, TaskState.TASK_STATE_COMPLETED);
        assert.notEqual(second.id, working.id);
        const first = await client.getTask({ tenant: "", id: working.id, historyLength: 0 });
        assert.equal(
          first.status?.state,
          strategy === "enqueue" ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_CANCELED,
        );
        const texts = (await conversation(t, working.contextId)).map(textOf);
        if (strategy === "enqueue") {
          assert.deepEqual(texts, [SLOW_TEXT, SLOW_TEXT, "instead", "instead"]);
        }
        if (strategy === "rollback") assert.deepEqual(texts, ["instead", "instead"]);
        if (strategy === "interrupt") {
          assert.equal(texts.length, 4);
          assert.ok(SLOW_TEXT.startsWith(texts[1]) && texts[1] !== SLOW_TEXT);
        }
      });
    }

    await tt.step("enqueue answers at once: a submitted task behind the working one", async () => {
      const working = await workingTask(t, client);
      const queued = asTask(
        await client.sendMessage(request(
          message([text("later")], {
            contextId: working.contextId,
            metadata: { multitask_strategy: "enqueue" },
          }),
          { returnImmediately: true },
        )),
      );
      assert.equal(queued.status?.state, TaskState.TASK_STATE_SUBMITTED);
      const first = await client.getTask({ tenant: "", id: working.id, historyLength: 0 });
      assert.equal(first.status?.state, TaskState.TASK_STATE_WORKING);
      await eventually(async () =>
        (await client.getTask({ tenant: "", id: queued.id, historyLength: 0 })).status?.state ===
          TaskState.TASK_STATE_COMPLETED
      );
      const texts = (await conversation(t, working.contextId)).map(textOf);
      assert.deepEqual(texts, [SLOW_TEXT, SLOW_TEXT, "later", "later"]);
    });
  });
}
