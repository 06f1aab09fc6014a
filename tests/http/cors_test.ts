/**
 * Cross-origin requests (`http_server { cors { ... } }`): preflights answered on every route
 * (native, AG-UI, A2A) before the API key check, the allowed request headers and exposed response
 * headers, errors and streams carrying the headers too, other origins and a server without the
 * block left as they were; and a page on another origin holding an AG-UI conversation with agentd
 * in Chromium.
 */
import assert from "node:assert/strict";
import { launchChromium, startTestServer } from "../_kit/mod.ts";

const KEY = "cors-test-key-0123456789";
const APP = "http://app.example.test";

const manifest = (origins: string[]) => ({
  http_server: {
    cors: { allow_origins: origins },
    auth: { api_keys: [KEY] },
    protocol: { ag_ui: {}, a2a: {} },
  },
});

Deno.test("CORS: preflights on every route, headers on answers, errors and streams", async () => {
  await using t = await startTestServer({ manifest: manifest([APP]) });
  for (
    const [method, path] of [
      ["POST", "/v1/runs"],
      ["GET", "/v1/runs/r1/events"],
      ["POST", "/ag-ui/run"],
      ["POST", "/ag-ui/connect"],
      ["POST", "/a2a/message:stream"],
      ["PUT", "/v1/runs/r1/cancel"],
    ]
  ) {
    const res = await t.fetch(path, {
      method: "OPTIONS",
      headers: {
        origin: APP,
        "access-control-request-method": method,
        "access-control-request-headers": "content-type,x-api-key,x-tenant-id,last-event-id",
      },
    });
    assert.equal(res.status, 204, `${method} ${path}`);
    await res.body?.cancel();
    assert.equal(res.headers.get("access-control-allow-origin"), APP);
    assert.ok(res.headers.get("access-control-allow-methods")!.includes(method));
    const allowed = res.headers.get("access-control-allow-headers")!.split(",");
    for (
      const h of ["content-type", "authorization", "x-api-key", "x-tenant-id", "last-event-id"]
    ) {
      assert.ok(allowed.includes(h), `${h} allowed: ${allowed}`);
    }
  }

  // An answer, an error (no key) and a stream carry the origin and expose agentd's headers.
  const body = { messages: [{ role: "user", content: [{ type: "text", value: "hi" }] }] };
  const denied = await t.fetch("/v1/runs", {
    method: "POST",
    json: body,
    headers: { origin: APP },
  });
  assert.equal(denied.status, 401);
  await denied.body?.cancel();
  assert.equal(denied.headers.get("access-control-allow-origin"), APP);
  const stream = await t.fetch("/v1/runs", {
    method: "POST",
    json: body,
    headers: { origin: APP, "x-api-key": KEY },
  });
  assert.equal(stream.status, 200);
  await stream.text();
  assert.equal(stream.headers.get("access-control-allow-origin"), APP);
  const exposed = stream.headers.get("access-control-expose-headers")!.split(",");
  for (const h of ["x-request-id", "location", "x-run-id", "x-session-id"]) {
    assert.ok(exposed.includes(h), `${h} exposed: ${exposed}`);
  }

  // Another origin gets no permission.
  const other = await t.fetch("/v1/runs", {
    method: "OPTIONS",
    headers: { origin: "http://evil.example.test", "access-control-request-method": "POST" },
  });
  await other.body?.cancel();
  assert.equal(other.headers.get("access-control-allow-origin"), null);
});

Deno.test('CORS: off without the block; any origin with ["*"]', async () => {
  await using plain = await startTestServer();
  const preflight = await plain.fetch("/v1/runs", {
    method: "OPTIONS",
    headers: { origin: APP, "access-control-request-method": "POST" },
  });
  assert.equal(preflight.status, 405, "as before: OPTIONS is not a method of the route");
  assert.equal(preflight.headers.get("access-control-allow-origin"), null);
  // The body says why and how to allow the page's origin.
  assert.deepEqual(await preflight.json(), {
    code: 405001,
    message: `CORS is off on this server, so a page at ${APP} cannot call it. Allow the origin ` +
      `in the manifest: http_server { cors { allow_origins = ["${APP}"] } } ` +
      `(docs/configuration.md, http_server.cors)`,
  });
  // Also on an add-on's path, and on one no route serves.
  for (const path of ["/ag-ui/run", "/nowhere"]) {
    const other = await plain.fetch(path, {
      method: "OPTIONS",
      headers: { origin: APP, "access-control-request-method": "POST" },
    });
    assert.equal(other.status, 405);
    assert.match((await other.json()).message, /^CORS is off on this server/);
  }

  await using any = await startTestServer({
    manifest: { http_server: { cors: { allow_origins: ["*"] } } },
  });
  const res = await any.fetch("/healthz", { headers: { origin: APP } });
  await res.body?.cancel();
  assert.equal(res.headers.get("access-control-allow-origin"), "*");
});

/** The page another origin serves: an AG-UI conversation of two runs with agentd, in plain JS. */
function page(agentd: string): string {
  return `<!doctype html><meta charset="utf-8"><title>app</title><pre id="out"></pre>
<script type="module">
const agentd = ${JSON.stringify(agentd)};
const headers = { "content-type": "application/json", accept: "text/event-stream", "x-api-key": ${
    JSON.stringify(KEY)
  } };
async function run(threadId, messages) {
  const res = await fetch(agentd + "/ag-ui/run", {
    method: "POST",
    headers,
    body: JSON.stringify({ threadId, runId: crypto.randomUUID(), messages, tools: [], context: [], state: {}, forwardedProps: {} }),
  });
  if (!res.ok) throw new Error("run answered " + res.status);
  const text = await res.text();
  const events = text.split("\\n\\n").flatMap((frame) => {
    const data = frame.split("\\n").find((l) => l.startsWith("data: "));
    return data ? [JSON.parse(data.slice(6))] : [];
  });
  return { runId: res.headers.get("x-run-id"), events };
}
try {
  const threadId = crypto.randomUUID();
  const first = { id: crypto.randomUUID(), role: "user", content: "hello from another origin" };
  const one = await run(threadId, [first]);
  const answer = one.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
  const second = { id: crypto.randomUUID(), role: "user", content: "and again" };
  const two = await run(threadId, [first, { id: crypto.randomUUID(), role: "assistant", content: answer }, second]);
  const connect = await fetch(agentd + "/ag-ui/connect", {
    method: "POST",
    headers: { ...headers, "last-event-id": "1" },
    body: JSON.stringify({ threadId, runId: two.runId, messages: [] }),
  });
  document.getElementById("out").textContent = JSON.stringify({
    answer,
    again: two.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join(""),
    runIds: [one.runId, two.runId],
    finished: [one.events.at(-1).type, two.events.at(-1).type],
    connect: connect.status,
  });
} catch (err) {
  document.getElementById("out").textContent = JSON.stringify({ error: String(err) });
}
</script>`;
}

Deno.test({
  name: "CORS: a page on another origin holds an AG-UI conversation in Chromium",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  const app = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    () => new Response(html, { headers: { "content-type": "text/html; charset=utf-8" } }),
  );
  let html = "";
  const origin = `http://127.0.0.1:${app.addr.port}`;
  try {
    await using t = await startTestServer({ manifest: manifest([origin]) });
    html = page(t.url);
    await using browser = await launchChromium();
    const tab = await browser.newPage();
    const problems: string[] = [];
    tab.on("pageerror", (e) => problems.push(String(e)));
    tab.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    await tab.goto(origin);
    await tab.waitForFunction("document.getElementById('out').textContent !== ''");
    const out = JSON.parse((await tab.textContent("#out"))!);
    assert.deepEqual(problems, []);
    assert.equal(out.error, undefined);
    assert.equal(out.answer, "hello from another origin");
    assert.equal(out.again, "and again");
    assert.ok(out.runIds.every((id: string | null) => typeof id === "string"), "x-run-id readable");
    assert.deepEqual(out.finished, ["RUN_FINISHED", "RUN_FINISHED"]);
    assert.equal(out.connect, 200, "connect with Last-Event-ID passes the preflight");
  } finally {
    await app.shutdown();
  }
});
