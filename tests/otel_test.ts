/**
 * The OpenTelemetry API is loaded only when Deno's OpenTelemetry is on (src/otel.ts): off, the
 * module is undefined (and its ~50 modules are not loaded at start); on, it is the API with Deno's
 * provider registered.
 */
import assert from "node:assert/strict";
import { otel, SPAN_STATUS_ERROR } from "../src/otel.ts";

Deno.test("otel: without OTEL_DENO the API is not loaded", () => {
  assert.equal(Deno.env.get("OTEL_DENO"), undefined, "run the tests without OTEL_DENO");
  assert.equal(otel, undefined);
});

Deno.test("otel: with OTEL_DENO=true it is the API, Deno's provider registered", async () => {
  const code = `const { otel, SPAN_STATUS_ERROR } = await import(${
    JSON.stringify(new URL("../src/otel.ts", import.meta.url).href)
  });
    console.log(JSON.stringify({
      error: otel.SpanStatusCode.ERROR === SPAN_STATUS_ERROR,
      recording: otel.trace.getTracer("t").startSpan("s").isRecording(),
    }));`;
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", "--no-prompt", code],
    env: {
      OTEL_DENO: "true",
      OTEL_DENO_CONSOLE: "ignore",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
    },
    stderr: "inherit",
  }).output();
  assert.ok(out.success);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(out.stdout)), {
    error: true,
    recording: true,
  });
  assert.equal(SPAN_STATUS_ERROR, 2);
});
