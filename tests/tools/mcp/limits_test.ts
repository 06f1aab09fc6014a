/**
 * MCP servers cannot stall or grow agentd (issue 27, item 3), against a hostile server written
 * with the official SDK (fixtures/hostile_server.ts): a reply longer than `MAX_LINE_BYTES` is
 * refused without buffering it, and the connection goes on; a server that stops reading its
 * stdin while it sends pings is stopped and restarted once `MAX_QUEUED_BYTES` wait for it; a
 * `list_changed` storm over thousands of tools keeps `MAX_TOOLS`. The longest wait of a
 * concurrent `/healthz` is printed for bench/README.md, not asserted.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import {
  eventually,
  probeHealth,
  slowTest,
  startTestServer,
  type TestServer,
} from "../../_kit/mod.ts";
import { MAX_LINE_BYTES, MAX_TOOLS } from "../../../src/tools/mcp/mod.ts";
import { DENO_JSON, onlyResult, run, user } from "./helpers.ts";

const HOSTILE = fileURLToPath(new URL("./fixtures/hostile_server.ts", import.meta.url));
const COMMAND = [Deno.execPath(), "run", "-A", "--no-prompt", "--config", DENO_JSON, HOSTILE];
const MiB = 1024 * 1024;

function manifest(env: Record<string, string> = {}) {
  return {
    agent: { name: "mcp-limits", model: { provider: "echo" } },
    mcp_server: { evil: { command: COMMAND, env, timeout: 60_000 } },
  };
}

/** The content of the one tool result of a run calling `tool` with `args`. */
async function call(t: TestServer, tool: string, args: Record<string, unknown> = {}) {
  const events = await run(t, { messages: [user(`/call evil__${tool} ${JSON.stringify(args)}`)] });
  return JSON.stringify(onlyResult(events).content);
}

Deno.test("mcp limits: a reply over the line cap is refused without a freeze", async () => {
  await using t = await startTestServer({ manifest: manifest() });
  // A first run and tool call warm the process (~125 ms of first-run work here, whatever the
  // tool), so the waits below are the lines' own.
  assert.match(await call(t, "ok"), /fine/);
  for (const bytes of [3 * MiB, 9 * MiB]) {
    const probe = probeHealth(t.url);
    const content = await call(t, "big", { bytes });
    const { longestMs } = await probe.stop();
    console.log(`a ${bytes / MiB} MiB reply line: longest /healthz wait ${longestMs} ms`);
    if (bytes > MAX_LINE_BYTES) {
      assert.match(content, /too large/, content.slice(0, 300));
      assert.match(content, new RegExp(`at most ${MAX_LINE_BYTES}`));
    } else {
      // Under the line cap it is read, and refused by the result cap (1 MiB of JSON).
      assert.doesNotMatch(content, /reply .* was too large/, content.slice(0, 300));
    }
  }
  // The stream goes on after the dropped line: the same process answers.
  assert.match(await call(t, "ok"), /fine/);
  assert.ok(!t.logs.some((l) => l.includes("mcp server stopped")), "no restart was needed");
});

slowTest("mcp limits: a server that does not read its stdin is stopped and restarted", async () => {
  await using t = await startTestServer({ manifest: manifest() });
  const before = Deno.memoryUsage().rss;
  const probe = probeHealth(t.url);
  assert.match(await call(t, "flood", { pings: 400_000 }), /flooding/);
  const stopped = await eventually(
    () => t.logs.find((l) => l.includes("mcp server stopped") && l.includes("does not read")),
    { timeout: 60_000, what: "the flooding server to be stopped" },
  );
  assert.match(stopped, /stdin/);
  await eventually(() => t.logs.some((l) => l.includes("mcp server reconnected")), {
    timeout: 60_000,
    what: "the server to be restarted",
  });
  const { longestMs } = await probe.stop();
  const grown = Deno.memoryUsage().rss - before;
  console.log(
    `400k pings, stdin unread: RSS +${(grown / MiB).toFixed(0)} MiB, longest /healthz wait ` +
      `${longestMs} ms`,
  );
  // Generous: the replies waiting are bounded (MAX_QUEUED_BYTES, MAX_QUEUED_MESSAGES), not by
  // the pings.
  assert.ok(grown < 512 * MiB, `RSS grew ${grown / MiB} MiB`);
  assert.match(await call(t, "ok"), /fine/, "the restarted server answers");
});

slowTest("mcp limits: thousands of tools and a list_changed storm keep MAX_TOOLS", async () => {
  await using t = await startTestServer({ manifest: manifest({ TOOLS: "3000" }) });
  const capped = () => t.logs.filter((l) => l.includes("lists too many tools")).length;
  assert.equal(capped(), 1, "the first list was capped");
  // The first MAX_TOOLS of the list are offered (the four named tools, then t0, t1 ...).
  const last = `t${MAX_TOOLS - 5}`;
  assert.match(await call(t, last, { a: "x" }), /"ok":true/);
  assert.doesNotMatch(await call(t, `t${MAX_TOOLS}`, { a: "x" }), /"ok":true/);
  const probe = probeHealth(t.url);
  // 2,000 more tools, each announced by a list_changed of its own.
  assert.match(await call(t, "grow", { tools: 2000 }), /5000 tools/);
  await eventually(() => capped() >= 2, { timeout: 60_000, what: "the refreshed list" });
  const { longestMs } = await probe.stop();
  console.log(`5,000 tools, 2,000 list_changed: longest /healthz wait ${longestMs} ms`);
  assert.match(await call(t, last, { a: "x" }), /"ok":true/);
  assert.doesNotMatch(await call(t, "t4000", { a: "x" }), /"ok":true/);
  // A tool is still called, its arguments checked when first used.
  assert.match(await call(t, "t7", { a: 1 }), /invalid arguments/);
  assert.match(await call(t, "ok"), /fine/);
});
