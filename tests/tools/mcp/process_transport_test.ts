/**
 * The stdio transport of MCP servers on its own: what environment a server gets, and that closing
 * stops the whole process group, children a wrapper left behind included. (Servers speaking MCP
 * over it: connection_test.ts and mcp_test.ts.)
 */
import assert from "node:assert/strict";
import { MCP_BASE_ENV, processEnv, ProcessTransport } from "../../../src/tools/mcp/mod.ts";
import { markedCount, newMarker, noneMarked } from "../helpers.ts";

Deno.test("process transport: the base variables of agentd, then the block's env", () => {
  assert.ok(MCP_BASE_ENV.includes("PATH") && !MCP_BASE_ENV.includes("OPENAI_API_KEY"));
  const from = { PATH: "/bin", HOME: "/root", OPENAI_API_KEY: "sk-x", LANG: "C" };
  assert.deepEqual(processEnv({ LANG: "en", TOKEN: "t" }, from), {
    PATH: "/bin",
    HOME: "/root",
    LANG: "en",
    TOKEN: "t",
  });
  assert.deepEqual(processEnv(undefined, from), { PATH: "/bin", HOME: "/root", LANG: "C" });
});

Deno.test("process transport: closing stops what the program started too", async () => {
  const marker = newMarker();
  // A wrapper that does not pass signals on, with a child of its own.
  const transport = new ProcessTransport({
    command: ["/bin/sh", "-c", `trap '' TERM; sleep ${marker} & wait`],
    env: { PATH: "/usr/bin:/bin" },
    cwd: "/",
    killGrace: 100,
  });
  await transport.start();
  assert.ok(await markedCount(marker, 1), "the child runs");
  await transport.close();
  assert.ok(transport.status, "the program has exited");
  assert.ok(await noneMarked(marker), "and its child with it");
});

Deno.test("process transport: a program that does not exist is named", () => {
  const transport = new ProcessTransport({ command: ["/nonexistent/server"], env: {}, cwd: "/" });
  assert.throws(
    () => transport.start(),
    /the program '\/nonexistent\/server' was not found \(or cwd does not exist\)/,
  );
});
