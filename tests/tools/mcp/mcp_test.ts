/**
 * MCP tool servers end to end: a real agentd server with a stdio MCP server (a subprocess written
 * with the SDK) and a Streamable HTTP one (the SDK's server transport in this process), driven
 * over the native API and AG-UI (`@ag-ui/client`) with the echo model's `/call` lines.
 */
import assert from "node:assert/strict";
import { HttpAgent } from "@ag-ui/client";
import { startServer, StartupError } from "../../../src/server.ts";
import { ManifestSchema } from "../../../src/config/schema.ts";
import { eventually, readSse, startTestServer } from "../../_kit/mod.ts";
import { startHttpMcpServer } from "./fixtures/http_server.ts";
import { onlyResult, pidAlive, run, STDIO_COMMAND, user } from "./helpers.ts";

const SECRET = "Bearer mcp-test-secret-0123456789";

Deno.test("MCP tools in runs: stdio and Streamable HTTP", async (tt) => {
  await using http = startHttpMcpServer();
  await using t = await startTestServer({
    manifest: {
      mcp_server: {
        local: { command: STDIO_COMMAND },
        remote: {
          url: http.url,
          headers: { Authorization: SECRET },
          tenant_header: "X-Tenant",
          timeout: 20_000,
        },
      },
      http_server: { protocol: { ag_ui: {} } },
    },
  });
  await tt.step("native: a run calls a stdio tool and uses its structured result", async () => {
    const events = await run(t, { messages: [user('/call local__add {"a": 2, "b": 3}')] });
    const result = onlyResult(events);
    assert.deepEqual(result.content, { sum: 5 });
    assert.equal(result.is_error, false);
    const end = events.at(-1)!;
    assert.equal(end.status, "completed");
    assert.equal((end.result as { text: string }).text, 'local__add returned: {"sum":5}');
  });

  await tt.step(
    "AG-UI: an HTTP tool's progress arrives as CUSTOM, its text as the result",
    async () => {
      const agent = new HttpAgent({ url: `${t.url}/ag-ui/run` });
      agent.messages = [{
        id: "m1",
        role: "user",
        content: '/call remote__progress {"steps": 3}',
      }];
      const custom: { name: string; value: unknown }[] = [];
      const results: string[] = [];
      await agent.runAgent({}, {
        onCustomEvent: ({ event }) => {
          custom.push({ name: event.name, value: event.value });
        },
        onToolCallResultEvent: ({ event }) => {
          results.push(String(event.content));
        },
      });
      assert.deepEqual(
        custom,
        [1, 2, 3].map((i) => ({
          name: "progress",
          value: { tool: "remote__progress", progress: i, total: 3, message: `step ${i}` },
        })),
      );
      assert.deepEqual(results, ["3 steps done"]);
      const answer = agent.messages.at(-1)!;
      assert.equal(answer.role, "assistant");
      assert.equal(answer.content, 'remote__progress returned: "3 steps done"');
    },
  );

  await tt.step("an isError result reaches the model as a tool error", async () => {
    const events = await run(t, { messages: [user("/call local__fail {}")] });
    const result = onlyResult(events);
    assert.equal(result.is_error, true);
    assert.match(JSON.stringify(result.content), /the disk is full/);
    assert.equal(events.at(-1)!.status, "completed", "the model saw the error and answered");
  });

  await tt.step("invalid arguments are refused before the call", async () => {
    const before = http.calls.length;
    const events = await run(t, { messages: [user('/call remote__add {"a": "two"}')] });
    const result = onlyResult(events);
    assert.equal(result.is_error, true);
    assert.match(
      JSON.stringify(result.content),
      /invalid arguments for 'remote__add': .*required property 'b'.*must be number.*not called/,
    );
    assert.equal(http.calls.length, before, "the server never saw the call");
  });

  await tt.step(
    "the caller's tenant and the configured headers reach the HTTP server",
    async () => {
      const events = await run(t, { messages: [user("/call remote__whoami {}")] }, "acme");
      const seen = http.calls.findLast((c) => c.name === "whoami")!;
      assert.equal(seen.headers["x-tenant"], "acme");
      assert.equal(seen.headers["authorization"], SECRET);
      // A server that echoes a configured header back does not leak it to the model or logs.
      assert.deepEqual(onlyResult(events).content, {
        tenant: "acme",
        authorization: "[redacted]",
      });
      const text = JSON.stringify(events) + t.logs.join("\n");
      assert.ok(!text.includes("mcp-test-secret"), "no header value in events or logs");
    },
  );

  await tt.step("cancelling the run sends notifications/cancelled", async () => {
    const res = await t.fetch("/v1/runs", {
      method: "POST",
      json: { messages: [user("/call remote__slow {}")] },
    });
    assert.equal(res.status, 200);
    let runId = "";
    let status = "";
    for await (const frame of readSse(res)) {
      const event = JSON.parse(frame.data);
      if (event.kind === "run_started") runId = event.run_id;
      if (event.kind === "tool_call_end") {
        // The call is being made: wait until the server has it, then cancel.
        await eventually(() => http.calls.some((c) => c.name === "slow"), {
          what: "the slow call to arrive",
        });
        const cancel = await t.fetch(`/v1/runs/${runId}/cancel`, { method: "PUT" });
        assert.ok(cancel.status < 300, `cancel: ${cancel.status}`);
      }
      if (event.kind === "run_finished") status = event.status;
    }
    assert.equal(status, "cancelled");
    const call = http.received.find((m) =>
      "method" in m && m.method === "tools/call" &&
      (m.params as { name?: string }).name === "slow"
    ) as { id: number };
    await eventually(
      () =>
        http.received.some((m) =>
          "method" in m && m.method === "notifications/cancelled" &&
          (m.params as { requestId?: number }).requestId === call.id
        ),
      { what: "notifications/cancelled for the slow call" },
    );
    await eventually(() => http.aborted.includes(call.id), {
      what: "the slow handler to be aborted",
    });
  });

  await tt.step("a session the HTTP server forgot is re-established", async () => {
    const sessions = http.sessions();
    await http.forgetSessions();
    const events = await run(t, { messages: [user('/call remote__echo {"text": "again"}')] });
    assert.deepEqual(onlyResult(events).content, "again");
    assert.equal(http.sessions(), sessions + 1);
  });

  await tt.step("a tool added later (list_changed) is offered to the next runs", async () => {
    const absent = onlyResult(await run(t, { messages: [user("/call local__greet {}")] }));
    assert.match(JSON.stringify(absent.content), /not available/);
    const added = await run(t, { messages: [user('/call local__add_tool {"name": "greet"}')] });
    assert.equal(onlyResult(added).content, "added greet");
    const greeted = await eventually(async () => {
      const result = onlyResult(await run(t, { messages: [user("/call local__greet {}")] }));
      return result.is_error ? undefined : result;
    }, { what: "local__greet to be offered" });
    assert.equal(greeted.content, "hello from greet");
  });

  await tt.step("a stdio server that crashes is restarted", async () => {
    const pid = Number(
      onlyResult(await run(t, { messages: [user("/call local__pid {}")] })).content,
    );
    assert.ok(pidAlive(pid));
    const crash = onlyResult(await run(t, { messages: [user("/call local__crash {}")] }));
    assert.equal(crash.is_error, true);
    assert.match(
      JSON.stringify(crash.content),
      /stopped during the call \(the process exited with code 3; stderr: .*crashing on purpose\); agentd is restarting it/,
    );
    const next = await eventually(async () => {
      const result = onlyResult(await run(t, { messages: [user("/call local__pid {}")] }));
      // Meanwhile a call fails clearly (connection_test.ts checks the whole message).
      if (result.is_error) {
        assert.match(JSON.stringify(result.content), /is not available \(the process exited/);
        return undefined;
      }
      return Number(result.content);
    }, { what: "the restarted server to answer" });
    assert.notEqual(next, pid);
    assert.ok(!pidAlive(pid));
  });
});

Deno.test("capabilities name MCP tools or whole servers; overrides work on them", async () => {
  await using http = startHttpMcpServer();
  await using t = await startTestServer({
    manifest: {
      agent: { name: "capabilities", capabilities: ["basic"] },
      capability: {
        basic: { tools: ["local__echo"] },
        everything_remote: { tools: ["remote"] },
      },
      mcp_server: { local: { command: STDIO_COMMAND }, remote: { url: http.url } },
    },
  });
  const offered = async (tool: string, override?: Record<string, unknown>) => {
    const events = await run(t, {
      messages: [user(`/call ${tool} {"text": "x"}`)],
      ...(override ? { capability_override: override } : {}),
    });
    return !JSON.stringify(onlyResult(events).content).includes("not available");
  };
  assert.equal(await offered("local__echo"), true);
  assert.equal(await offered("local__add"), false, "not in the capability");
  assert.equal(await offered("remote__echo"), false);
  const extend = { strategy: "extend", capabilities: ["everything_remote"] };
  assert.equal(await offered("remote__echo", extend), true);
  assert.equal(await offered("remote__add", extend), true, "the whole server");
  assert.equal(await offered("local__echo", extend), true);
  const replace = { strategy: "replace", capabilities: ["everything_remote"] };
  assert.equal(await offered("remote__echo", replace), true);
  assert.equal(await offered("local__echo", replace), false);

  // A client tool may not take a name in a server's namespace, offered or not.
  const res = await t.fetch("/v1/runs", {
    method: "POST",
    json: {
      messages: [user("hi")],
      tools: [{ name: "remote__mine", description: "", parameters: { type: "object" } }],
    },
  });
  assert.equal(res.status, 422);
  const body = await res.json();
  assert.equal(body.fields[0].errors[0].code, "tool_name_conflict");
});

/** A manifest whose only MCP server is `server`. */
function withServer(server: Record<string, unknown>) {
  return {
    manifest: ManifestSchema.parse({
      agent: { name: "down" },
      mcp_server: { broken: server },
      runtime: { storage: { path: ":memory:" } },
      http_server: { port: 0 },
    }),
    baseDir: "/",
  };
}

async function startupProblems(server: Record<string, unknown>): Promise<string[]> {
  const err = await startServer(withServer(server), { logWrite: () => {} }).then(
    async (s) => {
      await s.shutdown(0);
      throw new Error("the server started");
    },
    (e) => e,
  );
  assert.ok(err instanceof StartupError, String(err));
  return err.problems;
}

Deno.test("a server that is down at startup stops the service from starting", async () => {
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const [refused] = await startupProblems({ url: `http://127.0.0.1:${port}/mcp` });
  assert.match(refused, /^mcp_server 'broken': cannot start: cannot connect: /);

  const [exited] = await startupProblems({
    command: [Deno.execPath(), "eval", "console.error('no config'); Deno.exit(4)"],
  });
  assert.match(
    exited,
    /^mcp_server 'broken': cannot start: the process exited with code 4; stderr: no config$/,
  );

  const [missing] = await startupProblems({ command: ["/nonexistent/mcp-server"] });
  assert.match(missing, /the program '\/nonexistent\/mcp-server' was not found/);

  const [silent] = await startupProblems({
    command: [Deno.execPath(), "eval", "setTimeout(() => {}, 60_000)"],
    timeout: 300,
  });
  assert.match(silent, /no answer within 300 ms/);
});

Deno.test("shutting down leaves no MCP server process behind", async () => {
  const dir = await Deno.makeTempDir({ prefix: "agentd_mcp_" });
  const pidFile = `${dir}/pids`;
  // `sh` stays the parent (no exec), so the real server is a grandchild of agentd.
  const script = `echo $$ >> "$PID_FILE"; ${
    STDIO_COMMAND.map((a) => `'${a}'`).join(" ")
  }; echo "unreachable"`;
  let pids: number[] = [];
  {
    await using t = await startTestServer({
      manifest: {
        mcp_server: { wrapped: { command: ["sh", "-c", script], env: { PID_FILE: pidFile } } },
      },
    });
    const pid = onlyResult(await run(t, { messages: [user("/call wrapped__pid {}")] })).content;
    pids = (await Deno.readTextFile(pidFile)).trim().split("\n").map(Number);
    assert.equal(pids.length, 2, "the shell and the server");
    assert.equal(pids[1], Number(pid));
    assert.ok(pids.every(pidAlive));
  }
  await Deno.remove(dir, { recursive: true });
  // Killed by the end of the scope; the kernel may take a moment to finish them off.
  await eventually(() => pids.every((pid) => !pidAlive(pid)), {
    what: `processes ${pids.join(", ")} to be gone`,
  });
});
