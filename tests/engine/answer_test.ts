/**
 * The answer a model step writes (engine/answer.ts): reasoning and text in the order the model
 * gave them, a block's provider metadata kept, nothing empty stored.
 */
import assert from "node:assert/strict";
import { Answer } from "../../src/engine/answer.ts";

Deno.test("answer: reasoning and text in stream order, metadata on its block", () => {
  const a = new Answer();
  a.startReasoning("0");
  a.addReasoning("0", "let me ");
  a.addReasoning("0", "think");
  a.endReasoning("0", { anthropic: { signature: "sig" } });
  a.addText("Hello");
  a.addText(", world");
  a.startReasoning("2");
  a.endReasoning("2", { anthropic: { redactedData: "enc" } });
  assert.equal(a.text, "Hello, world");
  assert.deepEqual(a.parts(), [
    {
      type: "reasoning",
      value: "let me think",
      provider_metadata: { anthropic: { signature: "sig" } },
    },
    { type: "text", value: "Hello, world" },
    { type: "reasoning", value: "", provider_metadata: { anthropic: { redactedData: "enc" } } },
  ]);
});

Deno.test("answer: empty text and unsigned empty reasoning are not stored", () => {
  const a = new Answer();
  a.startReasoning("r");
  a.endReasoning("r", undefined);
  assert.ok(a.empty);
  a.addReasoning("late", "a block the stream never opened");
  assert.deepEqual(a.parts(), [{ type: "reasoning", value: "a block the stream never opened" }]);
});
