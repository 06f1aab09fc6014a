/**
 * Per-call cost of the tool runners (a fresh Worker / a fresh python3 process per call):
 * `deno bench -A --unstable-worker-options tests/tools/cost_bench.ts`.
 */
import { createJavaScriptTool, createPythonTool } from "../../src/tools/mod.ts";
import { fixture, recordingContext, spec } from "./helpers.ts";

const js = createJavaScriptTool(
  spec("greet", { kind: "javascript", module: fixture("js_tools.ts") }),
);
const jsState = createJavaScriptTool(
  spec("progress", { kind: "javascript", module: fixture("js_tools.ts"), function: "echoContext" }),
);
const py = createPythonTool(
  spec("echo", { kind: "python", module: fixture("py_light.py"), function: "echo" }),
);
const { ctx } = recordingContext({ counter: 1 });

Deno.bench("javascript tool call (fresh Worker: spawn, import, call, terminate)", async () => {
  const o = await js.call({ name: "x" }, ctx);
  if (o.is_error) throw new Error(JSON.stringify(o.result));
});

Deno.bench("javascript tool call with a TypeScript helper import and ctx", async () => {
  const o = await jsState.call({ q: 1 }, ctx);
  if (o.is_error) throw new Error(JSON.stringify(o.result));
});

Deno.bench("python tool call (fresh python3 process)", async () => {
  const o = await py.call({ q: 1 }, ctx);
  if (o.is_error) throw new Error(JSON.stringify(o.result));
});

Deno.bench("baseline: empty Worker from a data: URL, round trip, terminate", async () => {
  const w = new Worker("data:text/javascript,self.onmessage=()=>self.postMessage(1)", {
    type: "module",
  });
  await new Promise((r) => {
    w.onmessage = r;
    w.postMessage(0);
  });
  w.terminate();
});
