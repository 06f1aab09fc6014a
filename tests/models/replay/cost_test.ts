/**
 * With a model price in the manifest (`agent.model.prices`), a run's cost reaches every protocol
 * as its usage does: the native `run_finished`, AG-UI `RUN_FINISHED.metadata.cost` (official
 * client), the AI SDK `finish` chunk's `messageMetadata.cost` (official chat) and the A2A task
 * metadata (`@a2a-js/sdk`: the blocking send, the streamed final status update, `GetTask`), each
 * equal to the run record's. Without a price none of them has a cost.
 */
import assert from "node:assert/strict";
import type { StreamResponse } from "@a2a-js/sdk";
import { asTask, clientFor, collect, message, request, text } from "../../protocols/a2a/sdk.ts";
import { Chat, ChatFetch, transport } from "../../protocols/ai_sdk/chat.ts";
import { agUiRun, run, runRecord, startRig, user } from "./run_kit.ts";
import { recording, replay, type Wire } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

// The recording reports 18 input and 5 output tokens: at 3 and 15 per million tokens.
const PRICES = { "anthropic-replayed": { input_per_mtok: 3, output_per_mtok: 15 } };
const PER_RUN = (18 * 3 + 5 * 15) / 1_000_000;

for (const priced of [true, false]) {
  Deno.test(`replay: a run's cost on every protocol (${priced ? "priced" : "no price"})`, async (tt) => {
    const rec = recording("anthropic/anthropic-refusal.chunks.txt");
    await using rig = await startRig(rec.wire as Wire, { model: priced ? { prices: PRICES } : {} });
    const cost = priced ? PER_RUN : undefined;
    const enqueue = () => rig.replay.enqueue(replay(rec));

    await tt.step("native run_finished and the run record", async () => {
      enqueue();
      const end = (await run(rig.t, { messages: [user("hi")] })).at(-1)!;
      assert.equal(end.cost, cost ?? null);
      assert.equal((await runRecord(rig.t, end.run_id as string)).cost, cost ?? null);
    });

    await tt.step("AG-UI RUN_FINISHED metadata", async () => {
      enqueue();
      const finished = (await agUiRun(rig.t, "hi")).find((e) => e.type === "RUN_FINISHED") as Loose;
      assert.equal(finished.metadata.finishReason, "refusal");
      assert.equal(finished.metadata.cost, cost);
    });

    await tt.step("AI SDK finish messageMetadata", async () => {
      enqueue();
      const recorder = new ChatFetch();
      const chat = new Chat({ id: crypto.randomUUID(), transport: transport(rig.t.url, recorder) });
      await chat.sendMessage({ text: "hi" });
      assert.equal(chat.status, "ready", String(chat.error));
      const metadata = chat.messages.at(-1)!.metadata as Loose;
      assert.equal(metadata.modelFinishReason, "refusal");
      assert.equal(metadata.cost, cost);
      await recorder.checkAll();
    });

    await tt.step("A2A task metadata", async () => {
      const client = await clientFor(rig.t, "HTTP+JSON");
      enqueue();
      const sent = asTask(await client.sendMessage(request(message([text("hi")]))));
      assert.equal(sent.metadata?.cost, cost);
      const read = await client.getTask({ tenant: "", id: sent.id });
      assert.equal(read.metadata?.cost, cost);
      enqueue();
      const events: StreamResponse[] = await collect(
        client.sendMessageStream(request(message([text("hi")]))),
      );
      const finals = events.flatMap((e) =>
        e.payload?.$case === "statusUpdate" && e.payload.value.metadata?.finishReason
          ? [e.payload.value]
          : []
      );
      assert.equal(finals.length, 1);
      assert.equal(finals[0].metadata?.cost, cost);
    });
  });
}
