/**
 * A2A task metadata carries what the model reported (`finishReason`, `usage`), read through the
 * official `@a2a-js/sdk` client on both bindings: the blocking send's task, the streamed final
 * status update, and `GetTask`; each equal to the native run record's.
 */
import assert from "node:assert/strict";
import type { StreamResponse, Task } from "@a2a-js/sdk";
import type { Client } from "@a2a-js/sdk/client";
import { storeKinds, type TestServer } from "../../_kit/mod.ts";
import { asTask, collect, message, nativeRun, overEachBinding, request, text } from "./sdk.ts";

for (const store of storeKinds) {
  Deno.test(`a2a usage (${store}): task metadata holds the finish reason and usage`, (tt) =>
    overEachBinding(tt, store, scenarios));
}

/** The run record's report, as the task metadata should show it. */
async function expected(t: TestServer, taskId: string): Promise<Record<string, unknown>> {
  const run = await nativeRun(t, taskId);
  assert.equal(run.finish_reason, "stop");
  assert.ok(run.usage.input_tokens > 0 && run.usage.output_tokens > 0, JSON.stringify(run.usage));
  return { finishReason: run.finish_reason, usage: run.usage };
}

async function scenarios(tt: Deno.TestContext, t: TestServer, client: Client): Promise<void> {
  let sent: Task | undefined;
  await tt.step("send: the completed task's metadata", async () => {
    sent = asTask(await client.sendMessage(request(message([text("count my tokens")]))));
    assert.deepEqual(sent.metadata, await expected(t, sent.id));
  });

  await tt.step("get: the stored task's metadata", async () => {
    const task = await client.getTask({ tenant: "", id: sent!.id });
    assert.deepEqual(task.metadata, await expected(t, sent!.id));
  });

  await tt.step("stream: the final status update's metadata", async () => {
    const events: StreamResponse[] = await collect(
      client.sendMessageStream(request(message([text("stream my tokens")]))),
    );
    const finals = events.flatMap((e) =>
      e.payload?.$case === "statusUpdate" && e.payload.value.metadata?.finishReason
        ? [e.payload.value]
        : []
    );
    assert.equal(finals.length, 1, "only the final status update carries them");
    assert.deepEqual(finals[0].metadata, await expected(t, finals[0].taskId));
  });
}
