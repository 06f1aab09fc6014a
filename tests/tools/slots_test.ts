/**
 * `runtime.tools.max_processes`: the server-wide bound on tool calls running in sandbox processes
 * at once, over every JavaScript and Python tool. Calls beyond it wait for a slot, at most their
 * tool's timeout, and a cancelled run stops waiting. A freed slot goes to the tenant holding the
 * fewest (first come, first served within a tenant): a flood never holds another tenant's call back
 * past the next freed slot.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { type Config, ManifestSchema } from "../../src/config/schema.ts";
import { buildTools, closeTools, ProcessSlots, type Tool } from "../../src/tools/mod.ts";
import { fixture, recordingContext } from "./helpers.ts";

const FIXTURES = dirname(fixture("js_tools.ts"));

/** Tools of the fixtures under a server bound of `max` processes. */
function tools(max: number, tool: Record<string, unknown>): Map<string, Tool> {
  const config: Config = {
    manifest: ManifestSchema.parse({
      agent: { name: "t" },
      tool,
      runtime: { tools: { max_processes: max } },
    }),
    baseDir: FIXTURES,
  };
  return buildTools(config);
}

const JS_SPAN = { kind: "javascript", module: "js_tools.ts", function: "span" };
const PY_SPAN = { kind: "python", module: "py_tools.py", function: "span" };

/** The most intervals that hold one instant. */
function mostAtOnce(spans: { start: number; end: number }[]): number {
  return Math.max(
    ...spans.map((s) => spans.filter((o) => o.start <= s.start && s.start < o.end).length),
  );
}

Deno.test("tool processes: at most max_processes calls run at once, over all tools", async () => {
  const built = tools(2, { js_span: JS_SPAN, py_span: PY_SPAN });
  try {
    await Promise.all([...built.values()].map((t) => t.prepare?.()));
    const calls = ["js_span", "py_span", "js_span", "py_span", "js_span", "py_span"].map(
      (name) => built.get(name)!.call({ ms: 300 }, recordingContext().ctx),
    );
    const outcomes = await Promise.all(calls);
    for (const o of outcomes) assert.equal(o.is_error, false, JSON.stringify(o.result));
    const spans = outcomes.map((o) => o.result as { start: number; end: number });
    assert.equal(mostAtOnce(spans), 2, JSON.stringify(spans));
  } finally {
    await closeTools(built);
  }
});

Deno.test("tool processes: a call waits for a slot at most its timeout; a cancel ends the wait", async () => {
  const built = tools(1, { hold: JS_SPAN, quick: { ...JS_SPAN, timeout: 400 } });
  try {
    const holding = built.get("hold")!.call({ ms: 2_000 }, recordingContext().ctx);
    // The holder has its slot once its process runs the call.
    await new Promise((resolve) => setTimeout(resolve, 200));

    const started = performance.now();
    const late = await built.get("quick")!.call({ ms: 1 }, recordingContext().ctx);
    const waited = performance.now() - started;
    assert.equal(late.is_error, true);
    assert.equal(
      late.result,
      "all 1 tool process slots stayed in use for 400 ms " +
        "(runtime.tools.max_processes); the call did not start",
    );
    assert.ok(waited >= 390 && waited < 1_500, `waited ${waited} ms`);

    const { ctx, controller } = recordingContext();
    const cancelled = built.get("quick")!.call({ ms: 1 }, ctx);
    controller.abort();
    assert.equal((await cancelled).is_error, true);
    assert.match(String((await cancelled).result), /cancel/);

    assert.equal((await holding).is_error, false, "the holder was not disturbed");
    // Its slot is free again: the next call runs.
    assert.equal(
      (await built.get("quick")!.call({ ms: 1 }, recordingContext().ctx)).is_error,
      false,
    );
  } finally {
    await closeTools(built);
  }
});

Deno.test("tool process slots: a freed slot goes to the tenant holding fewest, FIFO within one", async () => {
  const slots = new ProcessSlots(2);
  const signal = new AbortController().signal;
  const granted: string[] = [];
  const take = async (tenant: string, name: string) => {
    const release = await slots.acquire(signal, 60_000, tenant);
    assert.equal(typeof release, "function");
    granted.push(name);
    return release as () => void;
  };
  const holders = [await take("a", "a0"), await take("a", "a1")];
  const flood = [2, 3, 4, 5].map((i) => take("a", `a${i}`));
  const other = take("b", "b0");
  const other2 = take("b", "b1");
  assert.equal(slots.waiting, 6);
  // The first freed slot goes to b (it holds none), not to a's older waiters.
  holders[0]();
  const b0 = await other;
  assert.deepEqual(granted, ["a0", "a1", "b0"]);
  // a holds none now: its oldest waiter.
  holders[1]();
  const a2 = await flood[0];
  assert.equal(granted.at(-1), "a2");
  // b holds none now, a one: b's.
  b0();
  const b1 = await other2;
  assert.equal(granted.at(-1), "b1");
  // Equal (one each): the oldest waiter, a3.
  a2();
  await flood[1];
  assert.equal(granted.at(-1), "a3");
  b1();
  (await flood[1])();
  await flood[2];
  for (const release of await Promise.all(flood.slice(2))) release();
  assert.deepEqual(granted, ["a0", "a1", "b0", "a2", "b1", "a3", "a4", "a5"]);
  assert.equal(slots.held, 0);
});

Deno.test("tool processes: a tenant's flood waits another tenant's call one slot at most", async () => {
  const built = tools(2, { span: JS_SPAN });
  const as = (tenant: string) => ({ ...recordingContext().ctx, tenant_id: tenant });
  try {
    await built.get("span")!.prepare?.();
    const flood = Array.from({ length: 10 }, () => built.get("span")!.call({ ms: 300 }, as("a")));
    // The flood holds both slots and 8 of its calls wait when the other tenant's call comes.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const other = await built.get("span")!.call({ ms: 1 }, as("b"));
    assert.equal(other.is_error, false, JSON.stringify(other.result));
    const outcomes = await Promise.all(flood);
    const starts = outcomes.map((o) => (o.result as { start: number }).start);
    const otherStart = (other.result as { start: number }).start;
    // Only the two calls that held the slots when it came started before it.
    assert.equal(
      starts.filter((s) => s < otherStart).length,
      2,
      JSON.stringify({ starts, otherStart }),
    );
  } finally {
    await closeTools(built);
  }
});
