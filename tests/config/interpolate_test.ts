/** `${env.NAME}` interpolation (`src/config/interpolate.ts`), through the loader and alone. */
import assert from "node:assert/strict";
import { interpolateTree, type InterpolationContext } from "../../src/config/interpolate.ts";
import { ManifestSchema } from "../../src/config/schema.ts";
import { assertSome, hcl, problems } from "./helpers.ts";

Deno.test("${env.NAME} is replaced inside any string, also nested and unquoted", async () => {
  const { manifest } = await hcl(
    `
agent {
  name = env.AGENT_NAME
  description = "runs in \${env.REGION} for \${env.TEAM}"
  model {
    inference_params {
      provider_params = { user = "\${env.TEAM}" }
      stop_sequences = ["\${env.STOP}"]
    }
  }
}
`,
    { AGENT_NAME: "from-env", REGION: "eu", TEAM: "core", STOP: "END" },
  );
  assert.equal(manifest.agent.name, "from-env");
  assert.equal(manifest.agent.description, "runs in eu for core");
  assert.deepEqual(manifest.agent.model.inference_params?.provider_params, { user: "core" });
  assert.deepEqual(manifest.agent.model.inference_params?.stop_sequences, ["END"]);
});

Deno.test("${env.NAME:-default} uses the default when unset or empty", async () => {
  const text = `
agent {
  name = "t"
  model {
    base_url = "\${env.BASE:-https://api.openai.com/v1}"
    api_key = "\${env.KEY:-}"
  }
}
`;
  const unset = await hcl(text);
  assert.equal(unset.manifest.agent.model.base_url, "https://api.openai.com/v1");
  assert.equal(unset.manifest.agent.model.api_key, "");
  const empty = await hcl(text, { BASE: "" });
  assert.equal(empty.manifest.agent.model.base_url, "https://api.openai.com/v1");
  const set = await hcl(text, { BASE: "http://localhost:1234/v1", KEY: "k" });
  assert.equal(set.manifest.agent.model.base_url, "http://localhost:1234/v1");
  assert.equal(set.manifest.agent.model.api_key, "k");
});

Deno.test("an unset variable without default names the variable and the path", async () => {
  const lines = await problems(hcl(`
agent {
  name = "t"
  model {
    api_key = "\${env.OPENAI_API_KEY}"
  }
}
`));
  assert.equal(lines.length, 1);
  assertSome(lines, /^agent\.model\.api_key: .*OPENAI_API_KEY is not set/);
});

Deno.test("$${ is a literal ${ and other expressions are rejected", async () => {
  const { manifest } = await hcl(`
agent {
  name = "t"
  instructions = "write $\${name} and 100%%{x} literally"
}
`);
  assert.equal(manifest.agent.instructions, "write ${name} and 100%{x} literally");

  const lines = await problems(hcl(`agent {\n  name = "\${upper(env.X)}"\n}\n`, { X: "a" }));
  assertSome(lines, /^agent\.name: unsupported expression \$\{upper\(env\.X\)\}/);
});

Deno.test("a whole-string reference on a number or boolean field is coerced", async () => {
  const { manifest } = await hcl(
    `
agent {
  name = "t"
  description = "\${env.STEPS}"
  max_steps = "\${env.STEPS}"
  model {
    timeout = env.TIMEOUT
  }
}
tool "t" {
  kind = "javascript"
  module = "t.ts"
  requires_approval = "\${env.APPROVE}"
  permissions {
    net = "\${env.NET}"
  }
}
`,
    { STEPS: "7", TIMEOUT: "2500", APPROVE: "true", NET: "false" },
  );
  assert.equal(manifest.agent.max_steps, 7);
  assert.equal(manifest.agent.model.timeout, 2500);
  // A string field keeps the text.
  assert.equal(manifest.agent.description, "7");
  assert.equal(manifest.tool.t.requires_approval, true);
  assert.equal(manifest.tool.t.permissions.net, false);
});

Deno.test("coercion only applies to whole references; failures say where the value came from", async () => {
  const partial = await problems(
    hcl(`agent {\n  name = "t"\n  max_steps = "1\${env.N}"\n}\n`, { N: "0" }),
  );
  assertSome(
    partial,
    /^agent\.max_steps: expected number, received string \(value from \$\{env\.N\}\)/,
  );
  const bad = await problems(
    hcl(`agent {\n  name = "t"\n  max_steps = env.N\n}\n`, { N: "many" }),
  );
  assertSome(bad, /^agent\.max_steps: expected number, received string/);
});

/** A context over the given environment, collecting errors and origins. */
function context(env: Record<string, string>, hcl: boolean): InterpolationContext {
  return { env, hcl, errors: [], origins: new Map() };
}

Deno.test("interpolateTree records where each value came from; %{ is text outside HCL", () => {
  const json = context({ A: "1", B: "2" }, false);
  const out = interpolateTree(
    {
      agent: { name: "${env.A}-${env.B}", description: "100%{x}" },
      tool: { t: { timeout: "${env.A}" } },
    },
    ManifestSchema,
    [],
    json,
  );
  assert.deepEqual(out, {
    agent: { name: "1-2", description: "100%{x}" },
    tool: { t: { timeout: 1 } },
  });
  assert.deepEqual(json.errors, []);
  assert.deepEqual([...json.origins], [
    ["agent.name", "value from ${env.A}, ${env.B}"],
    ["tool.t.timeout", "value from ${env.A}"],
  ]);
  const hclContext = context({}, true);
  interpolateTree({ agent: { description: "100%{x}" } }, ManifestSchema, [], hclContext);
  assert.equal(hclContext.errors.length, 1);
  assert.match(hclContext.errors[0], /^agent\.description: template directives \(%\{ \.\.\. \}\)/);
});

Deno.test("interpolateTree: no schema, no coercion; an unterminated ${ is an error", () => {
  const ctx = context({ A: "1" }, false);
  assert.equal(interpolateTree("${env.A}", undefined, [], ctx), "1");
  assert.deepEqual(interpolateTree({ x: ["${env.A", "$${env.A}"] }, undefined, [], ctx), {
    x: ["${env.A", "${env.A}"],
  });
  assert.deepEqual(ctx.errors, ["x[0]: unterminated ${ (write $${ for a literal ${)"]);
});
