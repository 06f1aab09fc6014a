/**
 * Our OpenTelemetry spans, end to end: `agentd serve` with `OTEL_DENO=true` exporting OTLP/HTTP
 * (JSON) to a local receiver; one run that calls a tool must arrive as `agentd.run` with its
 * `agentd.model.open`, `agentd.tool.call` and `agentd.store.*` children, inside the trace of the
 * HTTP request, with the attributes docs/observability.md lists.
 */
import assert from "node:assert/strict";
import { eventually, readEvents, startServerProcess, tempDir } from "../_kit/mod.ts";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  status?: { code?: number; message?: string };
}

/** An attribute's value, whatever its OTLP type (`stringValue`, `intValue`...). */
function attr(span: OtlpSpan, key: string): unknown {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value && Object.values(value)[0];
}

Deno.test("tracing: a run's spans reach an OTLP receiver with their names, attributes and parents", async () => {
  const spans: OtlpSpan[] = [];
  await using receiver = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    async (req) => {
      if (new URL(req.url).pathname === "/v1/traces") {
        const body = await req.json();
        for (const rs of body.resourceSpans ?? []) {
          for (const ss of rs.scopeSpans ?? []) spans.push(...(ss.spans ?? []));
        }
      } else await req.body?.cancel();
      return Response.json({});
    },
  );
  await using dir = await tempDir("agentd_tracing_");
  await dir.write({
    // A tool's directory may not hold the manifest (docs/tools.md#the-tools-directory).
    "tools/math.js": "export function add(a) { return a.x + a.y; }\n",
    "agent.hcl": `agent {\n  name = "traced"\n  capabilities = ["math"]\n}\n` +
      `capability "math" {\n  tools = ["add"]\n}\n` +
      `tool "add" {\n  kind = "javascript"\n  module = "tools/math.js"\n  function = "add"\n}\n` +
      `runtime {\n  storage {\n    path = ":memory:"\n  }\n}\nhttp_server {}\n`,
  });
  await using server = await startServerProcess({
    manifest: `${dir.path}/agent.hcl`,
    env: {
      OTEL_DENO: "true",
      OTEL_DENO_CONSOLE: "ignore",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.addr.port}`,
      OTEL_SERVICE_NAME: "agentd-test",
      // Export every 100 ms instead of every 5 s.
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
    name: "traced server",
  });

  const res = await fetch(`${server.url}/v1/runs`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      run_id: "traced-run",
      messages: [{ role: "user", content: [{ type: "text", value: '/call add {"x":2,"y":3}' }] }],
    }),
  });
  const events = await readEvents(res);
  assert.equal(events.at(-1)?.status, "completed", JSON.stringify(events.at(-1)));

  // Deno's batch exporter sends within its schedule delay; the run span ends last.
  const run = await eventually(() => spans.find((s) => s.name === "agentd.run"), {
    timeout: 20_000,
    what: "the agentd.run span",
  });
  assert.equal(attr(run, "agentd.run_id"), "traced-run");
  assert.equal(attr(run, "agentd.tenant"), "default");
  assert.equal(typeof attr(run, "agentd.session_id"), "string");
  assert.equal(attr(run, "agentd.run.status"), "completed");
  assert.ok(run.parentSpanId, "the run span is inside the request's trace");
  const request = await eventually(() => spans.find((s) => s.spanId === run.parentSpanId), {
    what: "the HTTP request span",
  });
  assert.equal(request.traceId, run.traceId);

  const inRun = (name: string) =>
    spans.filter((s) => s.name === name && s.parentSpanId === run.spanId);
  const models = await eventually(() => {
    const found = inRun("agentd.model.open");
    return found.length === 2 ? found : undefined;
  }, { what: "two agentd.model.open spans in the run" });
  for (const model of models) {
    assert.equal(attr(model, "gen_ai.system"), "echo");
    assert.equal(attr(model, "gen_ai.request.model"), "echo");
    assert.equal(Number(attr(model, "agentd.model.attempts")), 1);
    assert.ok(attr(model, "agentd.model.establish_ms") !== undefined);
    assert.ok(attr(model, "agentd.model.first_output_ms") !== undefined);
  }
  const [tool] = inRun("agentd.tool.call");
  assert.ok(tool, "an agentd.tool.call span in the run");
  assert.equal(attr(tool, "agentd.tool.name"), "add");
  assert.equal(attr(tool, "agentd.run_id"), "traced-run");
  assert.equal(typeof attr(tool, "agentd.tool_call_id"), "string");
  const stores = inRun("agentd.store.commitStep");
  assert.ok(stores.length > 0, "store spans are children of the run");
  assert.equal(attr(stores[0], "db.system"), "sqlite");
  assert.ok(
    spans.some((s) => s.name.startsWith("agentd.store.") && s.parentSpanId === request.spanId),
    "store calls of the request itself are children of the request span",
  );
});
