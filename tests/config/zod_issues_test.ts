/** Validation messages (`src/config/zod_issues.ts`): one line per zod issue, with hints. */
import assert from "node:assert/strict";
import { ManifestSchema } from "../../src/config/schema.ts";
import { formatIssues } from "../../src/config/zod_issues.ts";
import { assertSome, hcl, problems } from "./helpers.ts";

Deno.test("schema errors name the dotted path", async () => {
  const lines = await problems(hcl(`
agent {
  name = "t"
  colour = "blue"
}
tool "add" {
  kind = "javascript"
  module = "a.ts"
  timeout = "soon"
}
http_server {
  protocol {
    a2a { path = 42 }
  }
}
`));
  assertSome(lines, "http_server.protocol.a2a.path: expected string, received number");
  assertSome(lines, "tool.add.timeout: expected number, received string");
  assertSome(lines, /^agent\.colour: unknown attribute or block; expected one of: name, /);
  const missing = await problems(hcl(`runtime {}\n`));
  assertSome(missing, "agent: missing required block");
  const noName = await problems(hcl(`agent {\n  description = "x"\n}\n`));
  assertSome(noName, "agent.name: missing required attribute (expected string)");
  const typo = await problems(hcl(`agent {\n  name = "t"\n  max_step = 3\n}\n`));
  assertSome(typo, "agent.max_step: unknown attribute or block (did you mean max_steps?)");
});

Deno.test("formatIssues adds the value's origin, names union shapes and suggests keys", () => {
  const input = {
    agent: { max_steps: "x" },
    tool: { a: { kind: "javascript", module: "a.ts", permissions: { net: 3 } } },
    runtime: { storag: {} },
  };
  const parsed = ManifestSchema.safeParse(input);
  assert.ok(!parsed.success);
  const origins = new Map([["agent.max_steps", "value from ${env.STEPS}"]]);
  assert.deepEqual(formatIssues(parsed.error.issues, input, origins).sort(), [
    "agent.max_steps: expected number, received string (value from ${env.STEPS})",
    "agent.name: missing required attribute (expected string)",
    "runtime.storag: unknown attribute or block (did you mean storage?); expected one of: " +
    "default_tenant_id, max_session_bytes, max_message_bytes, storage, pubsub, replica, runs, attached, tools, metrics, " +
    "record_model_requests, log_level, log_format",
    "tool.a.permissions.net: expected boolean or array, received number",
  ]);
});
