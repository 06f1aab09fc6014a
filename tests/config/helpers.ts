/** Shared by the config tests: parse a manifest text and read the problems it is rejected with. */
import assert from "node:assert/strict";
import { ConfigError } from "../../src/config/errors.ts";
import { parseConfig } from "../../src/config/load.ts";
import type { Config } from "../../src/config/schema.ts";

/** The smallest valid manifest. */
export const MINIMAL = `agent {\n  name = "t"\n}\n`;

/** Parses HCL text as if it were `dir/agent.hcl`, with only the given environment. */
export function hcl(
  text: string,
  env: Record<string, string> = {},
  baseDir = "/srv/agent",
): Promise<Config> {
  return parseConfig(text, { filename: "agent.hcl", baseDir, env });
}

/** The messages of the `ConfigError` the promise rejects with. */
export async function problems(promise: Promise<unknown>): Promise<string[]> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${error}`);
    return [...error.messages];
  }
  assert.fail("expected the manifest to be rejected");
}

/** Asserts that some line contains `pattern` (a string) or matches it (a RegExp). */
export function assertSome(lines: string[], pattern: RegExp | string): void {
  const ok = lines.some((l) => typeof pattern === "string" ? l.includes(pattern) : pattern.test(l));
  assert.ok(ok, `no line matches ${pattern}:\n${lines.join("\n")}`);
}
