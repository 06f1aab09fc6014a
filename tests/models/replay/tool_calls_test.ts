/**
 * No half tool calls: a recorded Claude stream cut by `max_tokens` inside a call's arguments, and
 * recorded provider-run tools (Anthropic web search, the MCP connector). What the client streams
 * (native, AG-UI through `@ag-ui/client`) and what is stored agree: every call shown is stored
 * with a result, and agentd never runs a provider's call.
 */
import assert from "node:assert/strict";
import { agUiRun, run, runRecord, startRig, storedMessages, user } from "./run_kit.ts";
import { recording, replay } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Loose = any;

for (const piece of [undefined, 7]) {
  const how = piece ? ` (in ${piece}-byte pieces)` : "";

  Deno.test(`replay: a call cut by max_tokens is stored with an error result${how}`, async () => {
    await using rig = await startRig("anthropic");
    const rec = recording("anthropic/anthropic-max-tokens-in-tool-call.sse");
    rig.replay.enqueue(replay(rec, { piece }), replay(rec, { piece }));
    const tools = [{
      name: "make_file",
      description: "writes a file",
      parameters: { type: "object" },
    }];
    const events = await run(rig.t, { session_id: "cut", tools, messages: [user("write")] });
    const start = events.find((e) => e.kind === "tool_call_start")!;
    const id = start.tool_call_id as string;
    const result = events.find((e) => e.kind === "tool_call_result")!;
    assert.equal(result.tool_call_id, id);
    assert.equal(result.is_error, true);
    const expected = { error: "arguments incomplete: the output limit was reached" };
    assert.deepEqual(result.content, expected);
    const end = events.at(-1)!;
    assert.equal(end.status, "completed", "nothing is left pending");
    assert.equal(end.finish_reason, "length");
    assert.equal(rig.replay.requests.length, 1, "the model is not asked again");

    const stored = await storedMessages(rig.t, "cut") as Loose[];
    const assistant = stored.find((m) => m.role === "assistant");
    assert.deepEqual(assistant.tool_calls, [{ id, name: start.tool_name, arguments: {} }]);
    const answer = stored.find((m) => m.role === "tool");
    assert.equal(answer.tool_call_id, id);
    assert.deepEqual(answer.content, [{ type: "data", value: expected }]);
    assert.equal((await runRecord(rig.t, end.run_id as string)).finish_reason, "length");

    // AG-UI: the client's history holds the call and its error result, as stored.
    const agUi = await agUiRun(rig.t, "write");
    const agResult = agUi.find((e) => e.type === "TOOL_CALL_RESULT") as Loose;
    assert.equal(agResult.content, JSON.stringify(expected));
    assert.equal(agUi.filter((e) => e.type === "TOOL_CALL_START").length, 1);
  });

  for (const fixture of ["anthropic-web-search.chunks.txt", "anthropic-mcp.chunks.txt"]) {
    Deno.test(`replay: ${fixture}: provider-run calls shown, stored, never run${how}`, async () => {
      await using rig = await startRig("anthropic");
      const rec = recording(`anthropic/${fixture}`);
      rig.replay.enqueue(
        replay(rec, { piece }),
        replay(recording("anthropic/anthropic-text.chunks.txt"), { piece }),
      );
      const events = await run(rig.t, { session_id: "p", messages: [user("search")] });
      const starts = events.filter((e) => e.kind === "tool_call_start");
      assert.ok(starts.length > 0);
      assert.ok(starts.every((e) => e.provider_executed === true));
      const results = events.filter((e) => e.kind === "tool_call_result");
      assert.deepEqual(results.map((e) => e.tool_call_id), starts.map((e) => e.tool_call_id));
      assert.ok(results.every((e) => e.provider_executed === true && e.is_error === false));
      assert.equal(events.at(-1)!.status, "completed");
      assert.equal(rig.replay.requests.length, 1, "agentd answered nothing: one model call");

      const stored = await storedMessages(rig.t, "p") as Loose[];
      const assistant = stored.find((m) => m.role === "assistant");
      assert.deepEqual(
        assistant.tool_calls.map((c: Loose) => [c.id, c.provider_executed]),
        starts.map((e) => [e.tool_call_id, true]),
      );
      const answers = stored.filter((m) => m.role === "tool");
      assert.deepEqual(
        answers.map((m) => [m.tool_call_id, m.content[0].value]),
        results.map((e) => [e.tool_call_id, e.content]),
      );
      // The next run sends neither the provider's calls nor their results back.
      await run(rig.t, { session_id: "p", messages: [user("thanks")] });
      const sent = JSON.stringify(rig.replay.requests[1].body);
      for (const e of starts) assert.ok(!sent.includes(e.tool_call_id as string));
    });
  }
}
