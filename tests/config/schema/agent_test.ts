/** The `agent` and `capability` blocks' schemas (`src/config/schema/agent.ts`). */
import assert from "node:assert/strict";
import type { z } from "zod";
import { AgentSchema, CapabilitySchema, RetrySchema } from "../../../src/config/schema/agent.ts";

/** `[dotted path, message]` of each issue, or the parsed value when there is none. */
function issues(result: z.ZodSafeParseResult<unknown>): unknown {
  return result.success
    ? result.data
    : result.error.issues.map((i) => [i.path.join("."), i.message]);
}

Deno.test("retry: max_backoff may not be below initial_backoff", () => {
  assert.deepEqual(
    issues(RetrySchema.safeParse({ max_attempts: 3, initial_backoff: 500, max_backoff: 100 })),
    [["max_backoff", "max_backoff must be at least initial_backoff"]],
  );
  assert.deepEqual(
    issues(RetrySchema.safeParse({ max_attempts: 3, initial_backoff: 500, max_backoff: 500 })),
    { max_attempts: 3, initial_backoff: 500, max_backoff: 500 },
  );
});

Deno.test("an agent block needs only a name; its model and capabilities have defaults", () => {
  assert.deepEqual(issues(AgentSchema.safeParse({ name: "a" })), {
    name: "a",
    description: "",
    version: "0.1.0",
    instructions: "",
    model: { provider: "echo" },
    capabilities: [],
    max_steps: 25,
    reasoning: "show",
  });
  assert.deepEqual(issues(AgentSchema.safeParse({ name: "a", max_steps: 0 })), [
    ["max_steps", "Too small: expected number to be >=1"],
  ]);
  assert.deepEqual(issues(CapabilitySchema.safeParse({})), { tools: [] });
});
