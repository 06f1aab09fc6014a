/**
 * Run preparation (`prepareRun`, engine/prepare.ts): capability overrides and the tool set they
 * give, the system prompt, and the refusals (unknown capability, client tool name clash, the
 * model's).
 */
import assert from "node:assert/strict";
import { prepareRun } from "../../src/engine/prepare.ts";
import { EngineError } from "../../src/engine/mod.ts";
import { ModelConfigError } from "../../src/models/mod.ts";
import { assertError } from "../_kit/mod.ts";
import { addTool, FakeTool, Harness, user } from "./fakes.ts";

Deno.test("capabilities: inherit, extend, replace, unknown names and the tool set", async () => {
  await using h = await Harness.create({
    tools: [
      addTool(),
      new FakeTool("search", () => Promise.resolve({ result: [], is_error: false })),
    ],
    agent: { instructions: "Be brief.", capabilities: ["math"] },
    capability: {
      math: { tools: ["add"], instructions: "Use add for sums." },
      web: { tools: ["search"], instructions: "Search when unsure." },
    },
  });
  const names = (p: ReturnType<typeof prepareRun>) => p.model_tools.map((t) => t.name);
  const base = { messages: [user("x")] };
  const inherit = prepareRun(h.deps, { ...base, capability_override: { strategy: "inherit" } });
  assert.deepEqual(inherit.capabilities, ["math"]);
  assert.deepEqual(names(inherit), ["add"]);
  assert.equal(inherit.system, "Be brief.\n\n## Capability: math\nUse add for sums.");
  assert.deepEqual(names(prepareRun(h.deps, base)), ["add"]);

  const extend = prepareRun(h.deps, {
    ...base,
    capability_override: { strategy: "extend", capabilities: ["web", "math"] },
  });
  assert.deepEqual(extend.capabilities, ["math", "web"]);
  assert.deepEqual(names(extend), ["add", "search"]);
  assert.match(extend.system, /## Capability: web\nSearch when unsure\./);

  const replace = prepareRun(h.deps, {
    ...base,
    capability_override: { strategy: "replace", capabilities: ["web"] },
    context_vars: [{ description: "user name", value: "Ada" }],
    tools: [{ name: "pick", description: "client side", parameters: {} }],
  });
  assert.deepEqual(names(replace), ["search", "pick"]);
  assert.equal(
    replace.system,
    "Be brief.\n\n## Capability: web\nSearch when unsure.\n\n## Context\n- user name: Ada",
  );

  const unknown = await assertError(
    () =>
      prepareRun(h.deps, {
        ...base,
        capability_override: { strategy: "extend", capabilities: ["web", "nope"] },
      }),
    422000,
    { thrown: EngineError },
  );
  assert.equal(unknown.fields?.[0].field, "capability_override.capabilities.1");
  assert.equal(unknown.fields?.[0].errors[0].code, "unknown_capability");

  // A client tool may not take a server tool's name, even one of an inactive capability.
  const clash = await assertError(() =>
    prepareRun(h.deps, {
      ...base,
      tools: [
        { name: "ok", description: "", parameters: {} },
        { name: "search", description: "", parameters: {} },
      ],
    }), 422000);
  assert.deepEqual(clash.fields?.map((f) => [f.field, f.errors[0].code]), [
    ["tools.1.name", "tool_name_conflict"],
  ]);
  // The model seam's refusal passes through.
  await assertError(
    () => prepareRun(h.deps, { ...base, model: { override: { model: "unknown" } } }),
    422000,
    { thrown: ModelConfigError },
  );

  // Without any capability in the manifest every tool is available.
  await using open = await Harness.create({ tools: [addTool()], agent: { instructions: "" } });
  const p = prepareRun(open.deps, { messages: [user("x")] });
  assert.deepEqual(p.model_tools.map((t) => t.name), ["add"]);
  assert.deepEqual(p.capabilities, []);
  assert.equal(p.system, "");
});
