/**
 * The MCP connection on its own (`startMcpServers`), where a test needs a setting the manifest
 * does not have: a restart delay long enough to look at a server while it is down.
 */
import assert from "node:assert/strict";
import { ManifestSchema } from "../../../src/config/schema.ts";
import { startMcpServers } from "../../../src/tools/mcp/mod.ts";
import { eventually } from "../../_kit/mod.ts";
import { errorText, recordingContext } from "../helpers.ts";
import { startHttpMcpServer } from "./fixtures/http_server.ts";
import { pidAlive, STDIO_COMMAND } from "./helpers.ts";

function config(mcp_server: Record<string, unknown>) {
  return { manifest: ManifestSchema.parse({ agent: { name: "mcp" }, mcp_server }), baseDir: "/" };
}

Deno.test("while a crashed server waits for its restart, its calls fail clearly", async () => {
  const { ctx } = recordingContext();
  let echo;
  {
    await using servers = await startMcpServers(config({ local: { command: STDIO_COMMAND } }), {
      backoff: { initial: 60_000, max: 60_000 },
    });
    const tools = servers.tools();
    const pid = Number((await tools.get("local__pid")!.call({}, ctx)).result);
    const crash = await tools.get("local__crash")!.call({}, ctx);
    assert.equal(crash.is_error, true);
    assert.match(
      errorText(crash.result),
      /stopped during the call \(the process exited with code 3/,
    );
    assert.ok(!pidAlive(pid));

    echo = servers.tools().get("local__echo");
    assert.ok(echo, "the tools stay offered while the server is down");
    const meanwhile = await echo.call({ text: "hi" }, ctx);
    assert.equal(meanwhile.is_error, true);
    assert.match(
      errorText(meanwhile.result),
      /^the MCP server 'local' is not available \(the process exited with code 3; stderr: stdio test server \d+ ready \| crashing on purpose\); agentd reconnects in the background \(next attempt within \d+ s\), so try again later$/,
    );
  }
  assert.match(errorText((await echo.call({ text: "hi" }, ctx)).result), /was shut down/);
});

Deno.test("a call that outlives its timeout is cancelled at the server", async () => {
  await using http = startHttpMcpServer();
  await using servers = await startMcpServers(config({ remote: { url: http.url, timeout: 300 } }));
  const { ctx } = recordingContext();
  const outcome = await servers.tools().get("remote__slow")!.call({}, ctx);
  assert.equal(outcome.is_error, true);
  assert.equal(
    errorText(outcome.result),
    "timed out after 300 ms; the MCP server was sent notifications/cancelled",
  );
  const call = http.received.find((m) => "method" in m && m.method === "tools/call") as {
    id: number;
  };
  await eventually(
    () =>
      http.received.some((m) =>
        "method" in m && m.method === "notifications/cancelled" &&
        (m.params as { requestId: number }).requestId === call.id
      ),
    { what: "notifications/cancelled for the call" },
  );
});

Deno.test("the allowlist narrows a server's tools; describe() names them for check", async () => {
  await using http = startHttpMcpServer();
  await using servers = await startMcpServers(
    config({ remote: { url: http.url, tools: ["echo", "look.up", "nope"] } }),
  );
  const names = [...servers.tools().keys()];
  assert.equal(names.length, 2);
  assert.ok(names.includes("remote__echo"));
  const lookUp = names.find((n) => n.startsWith("remote__look_up_"))!;
  assert.match(lookUp, /^remote__look_up_[0-9a-f]{8}$/);
  const { ctx } = recordingContext();
  assert.deepEqual(await servers.tools().get(lookUp)!.call({ key: "k" }, ctx), {
    result: "value of k",
    is_error: false,
  });
  assert.deepEqual(servers.describe(), [
    `mcp_server "remote" (http): 2 tool(s): remote__echo, ${lookUp} (MCP name "look.up"); ` +
    "not offered by the server: nope",
  ]);
});

Deno.test("an HTTP server that went away is reconnected once it is back", async () => {
  const first = startHttpMcpServer();
  const port = Number(new URL(first.url).port);
  await using servers = await startMcpServers(config({ remote: { url: first.url } }), {
    backoff: { initial: 50, max: 200 },
  });
  const echo = servers.tools().get("remote__echo")!;
  const { ctx } = recordingContext();
  await first.close();
  const down = await echo.call({ text: "hi" }, ctx);
  assert.equal(down.is_error, true);
  assert.match(errorText(down.result), /^the MCP server 'remote' is not available \(unreachable: /);
  assert.ok(!errorText(down.result).includes("127.0.0.1"), "no URL in what the model reads");

  await using second = startHttpMcpServer(port);
  const back = await eventually(async () => {
    const outcome = await echo.call({ text: "back" }, ctx);
    return outcome.is_error ? undefined : outcome;
  }, { what: "the call to succeed again" });
  assert.deepEqual(back, { result: "back", is_error: false });
  assert.equal(second.sessions(), 1, "a new session on the new server");
});

Deno.test("a Streamable HTTP server's list_changed arrives on its event stream", async () => {
  await using http = startHttpMcpServer();
  await using servers = await startMcpServers(config({ remote: { url: http.url } }));
  const { ctx } = recordingContext();
  const added = await servers.tools().get("remote__add_tool")!.call({ name: "late" }, ctx);
  assert.deepEqual(added, { result: "added late", is_error: false });
  const late = await eventually(() => servers.tools().get("remote__late"), {
    what: "remote__late in the tool list",
  });
  assert.deepEqual(await late.call({}, ctx), { result: "hello from late", is_error: false });
});
