/**
 * The serverless entry (serverless.ts) as Deno Deploy runs it: `deno serve` with no subprocesses,
 * no writes and no FFI, on PostgreSQL. Runs, resume by cursor, cancel, AG-UI and A2A work; a
 * manifest that needs subprocesses or a SQLite file is refused at start with a sentence that says
 * why and what works instead.
 */
import assert from "node:assert/strict";
import { HttpAgent } from "@ag-ui/client";
import { Role } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory } from "@a2a-js/sdk/client";
import {
  dropSchema,
  pacedModel,
  readSse,
  skipNotice,
  slowTest,
  startServerProcess,
  tempDir,
  testPostgresUrl,
  uniqueName,
  userText,
} from "./_kit/mod.ts";

const WORDS = Array.from({ length: 20 }, (_, i) => `w${i}`).join(" ");
const slow = (delay_ms: number) => ({
  model: pacedModel(delay_ms),
});

slowTest({
  name: "serverless: a manifest that needs subprocesses or a disk is refused at start",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  await using dir = await tempDir("agentd_serverless_");
  await dir.write({ "tool.ts": "export function run() { return 1; }\n", "tool.py": "" });
  const manifest = {
    agent: { name: "refused", model: { provider: "echo" } },
    tool: {
      js: { kind: "javascript", module: dir.join("tool.ts"), function: "run", description: "a" },
      py: { kind: "python", module: dir.join("tool.py"), function: "run", description: "b" },
    },
    mcp_server: { local: { command: ["deno", "run", "server.ts"] } },
    runtime: { storage: { path: dir.join("agent.db") } },
    http_server: {},
  };
  const started = startServerProcess({ manifest, serverless: true, name: "serverless" });
  const error = await started.then(
    () => assert.fail("a manifest with subprocess tools must not start"),
    (err: Error) => err.message,
  );
  assert.match(
    error,
    /tool 'js': JavaScript tools run each call in a subprocess, and this host allows none/,
  );
  assert.match(error, /tool 'py': Python tools run each call in a subprocess/);
  assert.match(error, /client tool .* MCP server over Streamable HTTP/);
  assert.match(error, /mcp_server 'local': a stdio MCP server is a subprocess/);
  assert.match(error, /runtime\.storage: a SQLite file needs a writable disk/);
});

slowTest({
  name: "serverless: runs, resume by cursor, cancel, AG-UI and A2A on PostgreSQL",
  ignore: !testPostgresUrl,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (tt) => {
  const schema = uniqueName("serverless");
  const manifest = {
    agent: { name: "serverless", description: "An echo agent", model: { provider: "echo" } },
    runtime: { storage: { url: testPostgresUrl, schema }, log_level: "info" },
    http_server: { protocol: { ag_ui: {}, a2a: {} } },
  };
  try {
    await using p = await startServerProcess({ manifest, serverless: true, name: "serverless" });
    const post = (path: string, body: unknown) =>
      fetch(`${p.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });

    await tt.step("the store starts on the first request", async () => {
      const ready = await fetch(`${p.url}/readyz`);
      assert.deepEqual(await ready.json(), { status: "ready", store: "postgres" });
      assert.ok(p.logs.some((l) => l.includes('"msg":"started"')), p.logs.join("\n"));
    });

    await tt.step("an attached run", async () => {
      const res = await post("/v1/runs", { messages: [userText("hello serverless")] });
      assert.equal(res.status, 200);
      const end = JSON.parse((await readSse(res).until("run_finished")).data);
      assert.equal(end.status, "completed");
      assert.equal(end.result.text, "hello serverless");
    });

    await tt.step("resume by cursor", async () => {
      const started = await post("/v1/runs/start", { messages: [userText(WORDS)], ...slow(30) });
      assert.equal(started.status, 202);
      const { run_id } = await started.json();
      const first = readSse(await fetch(`${p.url}/v1/runs/${run_id}/events?after=0`));
      const seen: string[] = [];
      for await (const event of first) {
        seen.push(event.id!);
        if (seen.length === 3) break;
      }
      await first.cancel();
      const cursor = seen.at(-1)!;
      const rest = await readSse(
        await fetch(`${p.url}/v1/runs/${run_id}/events`, { headers: { "last-event-id": cursor } }),
      ).all();
      assert.ok(rest.length > 0);
      // What the two streams gave is the run's whole sequence: nothing twice, nothing missing.
      const whole = await readSse(await fetch(`${p.url}/v1/runs/${run_id}/events?after=0`)).all();
      assert.deepEqual([...seen, ...rest.map((e) => e.id)], whole.map((e) => e.id));
      assert.equal(JSON.parse(rest.at(-1)!.data).status, "completed");
    });

    await tt.step("cancel", async () => {
      const started = await post("/v1/runs/start", { messages: [userText(WORDS)], ...slow(500) });
      const { run_id } = await started.json();
      const cancel = await fetch(`${p.url}/v1/runs/${run_id}/cancel`, { method: "PUT" });
      assert.equal(cancel.status, 204);
      await cancel.body?.cancel();
      const events = await readSse(await fetch(`${p.url}/v1/runs/${run_id}/events?after=0`))
        .all();
      assert.equal(JSON.parse(events.at(-1)!.data).status, "cancelled");
      const run = await (await fetch(`${p.url}/v1/runs/${run_id}`)).json();
      assert.equal(run.status, "cancelled");
    });

    await tt.step("AG-UI", async () => {
      const agent = new HttpAgent({ url: `${p.url}/ag-ui/run` });
      agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "hello ag-ui" });
      const result = await agent.runAgent();
      const answer = result.newMessages.find((m) => m.role === "assistant");
      assert.equal(answer?.content, "hello ag-ui");
    });

    await tt.step("A2A", async () => {
      const factory = new ClientFactory({ transports: [new JsonRpcTransportFactory()] });
      const client = await factory.createFromUrl(`${p.url}/a2a/`);
      const result = await client.sendMessage({
        tenant: "",
        message: {
          messageId: crypto.randomUUID(),
          contextId: "",
          taskId: "",
          role: Role.ROLE_USER,
          parts: [{
            content: { $case: "text", value: "hello a2a" },
            metadata: undefined,
            filename: "",
            mediaType: "",
          }],
          metadata: undefined,
          extensions: [],
          referenceTaskIds: [],
        },
        configuration: undefined,
        metadata: undefined,
      });
      assert.ok("status" in result, JSON.stringify(result));
      const answer = result.artifacts.flatMap((a) => a.parts)
        .map((part) => part.content?.$case === "text" ? part.content.value : "").join("");
      assert.equal(answer, "hello a2a");
    });
  } finally {
    await dropSchema(schema);
  }
});

slowTest({
  name: "serverless: a store it cannot reach answers 503001 and is tried again on each request",
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  // A port nothing listens on.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const manifest = {
    agent: { name: "unreachable", model: { provider: "echo" } },
    runtime: {
      storage: { url: `postgres://postgres@127.0.0.1:${port}/test`, timeout: 1000 },
      log_level: "info",
    },
    http_server: {},
  };
  await using p = await startServerProcess({ manifest, serverless: true, name: "serverless" });
  for (let i = 0; i < 2; i++) {
    const res = await fetch(`${p.url}/healthz`);
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("retry-after"), "1");
    assert.equal((await res.json()).code, 503001);
  }
  assert.equal(p.logs.filter((l) => l.includes('"msg":"could not start"')).length, 2);
});

if (!testPostgresUrl) skipNotice("serverless on PostgreSQL", "AGENTD_TEST_POSTGRES_URL");
