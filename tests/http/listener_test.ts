/**
 * The wire limits of the listener (issue 12, Deliver 5), over raw TCP: a connection that sends
 * nothing, half the headers or half a body is answered 408 and closed once its timeout passed;
 * an idle keep-alive connection is closed; one connection over the cap is answered 503 and never
 * reaches the app; malformed requests get the JSON error body; a client that hangs up mid-body
 * is logged and counted as 499, never 500. The body limit holds while reading: a 256 MiB chunked
 * body is refused with the server's RSS growing by less than 32 MiB.
 */
import assert from "node:assert/strict";
import { eventually, slowTest, startServerProcess, startTestServer } from "../_kit/mod.ts";

const LIMITS = { header_timeout: 400, request_timeout: 800, idle_timeout: 600 };
/** Slack for a busy 2-core machine: the assertions are about a timeout existing, not its speed. */
const SLACK_MS = 5_000;
const encoder = new TextEncoder();

interface Exchange {
  /** Everything the server sent before closing. */
  text: string;
  /** Milliseconds from the last byte sent to the server closing the connection. */
  ms: number;
}

/** Sends `payload` on a new connection and reads until the server closes it. */
async function exchange(port: number, payload: string): Promise<Exchange> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    if (payload) await conn.write(encoder.encode(payload));
    const started = performance.now();
    let text = "";
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return { text, ms: performance.now() - started };
  } finally {
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

/** The status and JSON body of a raw HTTP/1.1 response. */
function parse(text: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head, body] = text.split("\r\n\r\n");
  return {
    status: Number(head.split(" ")[1]),
    headers: head.toLowerCase(),
    body: JSON.parse(body),
  };
}

function closedAfter(ex: Exchange, timeout: number, what: string): void {
  assert.ok(ex.ms >= timeout * 0.9, `${what} closed after ${ex.ms} ms, before ${timeout} ms`);
  assert.ok(ex.ms < timeout + SLACK_MS, `${what} still open ${ex.ms} ms after its timeout`);
}

Deno.test("timeouts close idle, half-sent and idle keep-alive connections", async (tt) => {
  await using t = await startTestServer({ manifest: { http_server: LIMITS } });
  const port = t.server.port;
  // Every 408 the steps' connections were answered: on a loaded machine the idle keep-alive
  // connection can reach request_timeout before idle_timeout and get its own 408 after the 200.
  let answered408 = 0;
  const counted = async (port: number, payload: string) => {
    const ex = await exchange(port, payload);
    answered408 += ex.text.match(/HTTP\/1\.1 408 /g)?.length ?? 0;
    return ex;
  };

  await tt.step("a connection that sends nothing: 408 after header_timeout", async () => {
    const ex = await counted(port, "");
    closedAfter(ex, LIMITS.header_timeout, "idle connection");
    const res = parse(ex.text);
    assert.equal(res.status, 408);
    assert.equal(res.body.code, 408001);
  });

  await tt.step("half the headers: 408 after header_timeout", async () => {
    const ex = await counted(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n");
    closedAfter(ex, LIMITS.header_timeout, "half-sent headers");
    assert.equal(parse(ex.text).status, 408);
  });

  await tt.step("half the body: 408 after request_timeout", async () => {
    const ex = await counted(
      port,
      "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
        'Content-Length: 100\r\n\r\n{"messages": [',
    );
    // The clock started with the headers: the body had the rest of request_timeout.
    closedAfter(ex, LIMITS.request_timeout - LIMITS.header_timeout, "half-sent body");
    assert.equal(parse(ex.text).status, 408);
    // The route reading the body logs the timeout as such, not as a client hang-up.
    const line = await eventually(() =>
      t.logs.map((l) => JSON.parse(l)).find((l) => l.path === "/v1/runs" && l.status)
    );
    assert.equal(line.status, 408);
    assert.equal(
      await t.server.store.listSessions("default", { per_page: 10 }).then((p) => p.count),
      0,
    );
  });

  await tt.step("an idle keep-alive connection: closed after idle_timeout", async () => {
    const ex = await counted(port, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    assert.match(ex.text, /^HTTP\/1.1 200/);
    assert.match(ex.text.toLowerCase(), /keep-alive/);
    closedAfter(ex, LIMITS.idle_timeout, "idle keep-alive connection");
  });

  await tt.step("each is counted", async () => {
    assert.ok(answered408 >= 3, `${answered408} connections answered 408`);
    const metrics = await (await t.fetch("/metrics")).text();
    assert.match(
      metrics,
      new RegExp(`agentd_http_client_errors_total\\{reason="timeout"\\} ${answered408}\n`),
    );
  });
});

Deno.test("one connection over max_connections is refused with 503 before the app", async () => {
  await using t = await startTestServer({
    manifest: {
      http_server: {
        ...LIMITS,
        header_timeout: 10_000,
        request_timeout: 10_000,
        max_connections: 2,
      },
    },
  });
  const port = t.server.port;
  const held = [
    await Deno.connect({ hostname: "127.0.0.1", port }),
    await Deno.connect({ hostname: "127.0.0.1", port }),
  ];
  try {
    await eventually(() =>
      t.server.metrics.registry.render().includes("agentd_http_connections_open 2")
    );
    const requests = t.logs.filter((l) => l.includes('"msg":"request"')).length;
    const body = JSON.stringify({ run_id: "x", messages: [{ role: "user", content: [] }] });
    const ex = await exchange(
      port,
      "POST /v1/runs/start HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
        `Content-Length: ${body.length}\r\n\r\n${body}`,
    );
    const res = parse(ex.text);
    assert.equal(res.status, 503);
    assert.equal(res.body.code, 503003);
    assert.match(res.headers, /retry-after: 1/);
    // The refused request never ran.
    assert.equal(t.logs.filter((l) => l.includes('"msg":"request"')).length, requests);
    assert.equal(await t.server.store.getRun("default", "x"), null);
    assert.match(t.server.metrics.registry.render(), /agentd_http_connections_refused_total 1\n/);
  } finally {
    for (const c of held) c.close();
  }
  // Once the others are gone, connections are accepted again.
  await eventually(async () => (await t.fetch("/healthz")).status === 200);
});

Deno.test("malformed requests get the JSON error body and never reach the app", async (tt) => {
  await using t = await startTestServer();
  const port = t.server.port;
  await tt.step("an invalid byte in a header value: 400004", async () => {
    const res = parse(
      (await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n")).text,
    );
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 400004);
  });
  await tt.step("a space in a header name: 400004", async () => {
    const res = parse(
      (await exchange(port, "GET /healthz HTTP/1.1\r\nHost: x\r\nX Bad: ab\r\n\r\n")).text,
    );
    assert.equal(res.status, 400);
  });
  await tt.step("no Host header: 400004", async () => {
    for (const version of ["1.1", "1.0"]) {
      const res = parse((await exchange(port, `GET /healthz HTTP/${version}\r\n\r\n`)).text);
      assert.equal(res.status, 400, `HTTP/${version}`);
      assert.equal(res.body.code, 400004);
      assert.match(String(res.body.message), /host/);
      assert.match(res.headers, /content-type: application\/json/);
    }
  });
  await tt.step("an invalid Host header: 400004", async () => {
    const ex = await exchange(port, "GET /healthz HTTP/1.1\r\nHost: a/b@c\r\n\r\n");
    const res = parse(ex.text);
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 400004);
  });
  await tt.step("a 20 KB URL: 431001", async () => {
    const res = parse(
      (await exchange(port, `GET /v1/runs/${"a".repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`)).text,
    );
    assert.equal(res.status, 431);
    assert.equal(res.body.code, 431001);
  });
  assert.ok(!t.logs.some((l) => l.includes('"msg":"request"') && l.includes("/v1/runs/aaa")));
});

Deno.test("a client that hangs up mid-body is a 499 line and label, not a 500", async () => {
  await using t = await startTestServer();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: t.server.port });
  await conn.write(encoder.encode(
    "POST /v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
      'Transfer-Encoding: chunked\r\n\r\n10\r\n{"messages": [{"\r\n',
  ));
  // The headers and part of the body are out; the body never ends.
  conn.close();
  const line = await eventually(() =>
    t.logs.map((l) => JSON.parse(l)).find((l) => l.msg === "client closed the request")
  );
  assert.equal(line.status, 499);
  assert.equal(line.path, "/v1/runs");
  assert.ok(!t.logs.some((l) => /"level":"error"/.test(l)), "nothing was logged as an error");
  const metrics = await (await t.fetch("/metrics")).text();
  assert.match(
    metrics,
    /agentd_http_requests_total\{method="POST",route="\/v1\/runs",status="499"\} 1/,
  );
  assert.doesNotMatch(metrics, /status="500"/);
});

Deno.test({
  name: "a 256 MiB chunked body is refused while read, RSS growing under 32 MiB",
  // The child's stderr reader and its process outlive single steps.
  sanitizeResources: false,
  sanitizeOps: false,
}, async (tt) => {
  await using server = await startServerProcess({
    manifest: {
      agent: { name: "wire", model: { provider: "echo" } },
      runtime: { storage: { path: ":memory:" }, log_level: "warn" },
      http_server: { protocol: { a2a: {} } },
    },
  });
  const port = Number(new URL(server.url).port);
  const paths = ["/a2a/tasks/t1:cancel", "/a2a/tasks/t1:subscribe", "/v1/runs"];
  // The first requests load and compile code paths (tens of MiB): measure bodies, not warm-up.
  for (const path of paths) assert.equal((await sendChunked(port, path, 2 << 20)).status, 413);
  /** The RSS once it stopped moving (background start-up work, a GC), as the baseline. */
  const steadyRss = () => {
    let last = -Infinity;
    return eventually(async () => {
      const now = await server.rss();
      const steady = Math.abs(now - last) < 512 * 1024;
      last = now;
      return steady && now;
    }, { timeout: 30_000, interval: 100, what: "the server's RSS to settle" });
  };
  for (const path of paths) {
    await tt.step(`POST ${path}`, async () => {
      const before = await steadyRss();
      let peak = before;
      const sampling = setInterval(async () => {
        peak = Math.max(peak, await server.rss().catch(() => 0));
      }, 20);
      const { status, sent } = await sendChunked(port, path, 256 * 1024 * 1024);
      clearInterval(sampling);
      peak = Math.max(peak, await server.rss());
      const growth = (peak - before) / 1024 / 1024;
      console.log(
        `${path}: ${status} after ${(sent / 1024 / 1024).toFixed(1)} MiB sent, RSS ` +
          `${(before / 1024 / 1024).toFixed(0)} MiB, peak growth ${growth.toFixed(1)} MiB`,
      );
      assert.equal(status, 413);
      assert.ok(growth < 32, `RSS grew by ${growth.toFixed(1)} MiB`);
    });
  }
});

/**
 * Streams up to `total` bytes as a chunked JSON body and returns the status the server answered
 * (it may answer and close before the body is done: then the rest is not sent).
 */
async function sendChunked(
  port: number,
  path: string,
  total: number,
): Promise<{ status: number; sent: number }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  const answer = (async () => {
    let text = "";
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) return text;
      text += new TextDecoder().decode(buf.subarray(0, n));
      if (text.includes("\r\n\r\n")) return text;
    }
  })();
  let answered = false;
  answer.finally(() => answered = true);
  const chunk = new Uint8Array(64 * 1024).fill(0x20); // spaces: valid JSON whitespace
  const frame = new Uint8Array([
    ...encoder.encode(`${chunk.byteLength.toString(16)}\r\n`),
    ...chunk,
    ...encoder.encode("\r\n"),
  ]);
  let sent = 0;
  try {
    await conn.write(encoder.encode(
      `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n` +
        "Transfer-Encoding: chunked\r\n\r\n",
    ));
    while (sent < total && !answered) {
      await conn.write(frame);
      sent += chunk.byteLength;
    }
    if (!answered) await conn.write(encoder.encode("0\r\n\r\n"));
  } catch { /* the server closed the connection: it answered */ }
  const text = await answer;
  try {
    conn.close();
  } catch { /* closed */ }
  return { status: Number(text.split(" ")[1]), sent };
}

/** One keep-alive `GET path` on an open connection: the status and the JSON body. */
async function getOn(conn: Deno.Conn, path: string): Promise<{ status: number; body: unknown }> {
  await conn.write(encoder.encode(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`));
  let text = "";
  const buf = new Uint8Array(4096);
  for (;;) {
    const end = text.indexOf("\r\n\r\n");
    const length = Number(/content-length: (\d+)/i.exec(text)?.[1]);
    if (end >= 0 && text.length >= end + 4 + length) {
      return { status: Number(text.split(" ")[1]), body: JSON.parse(text.slice(end + 4)) };
    }
    const n = await conn.read(buf);
    if (n === null) throw new Error(`connection closed after ${JSON.stringify(text)}`);
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
}

/** A fresh connection's `GET /healthz` status, or `undefined` when none came within `ms`. */
async function healthzWithin(url: string, ms: number): Promise<number | undefined> {
  const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(ms) }).catch(() => null);
  await res?.body?.cancel();
  return res?.status;
}

slowTest({
  name: "a flood of connections past the cap on a low open-files limit: served again after it",
  // The child's stderr reader and its process outlive single steps.
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  // 1200 descriptors leave room for 1200 - 831 = 369 connections: max_connections (4096) is
  // lowered to that. Before, the cap was 4096 and each refused connection kept its descriptor:
  // the listener ran out, and never accepted again.
  const openFiles = 1200;
  await using server = await startServerProcess({
    manifest: {
      agent: { name: "flood", model: { provider: "echo" } },
      runtime: { storage: { path: ":memory:" }, log_level: "warn" },
      http_server: { header_timeout: 60_000, request_timeout: 60_000 },
    },
    openFiles,
  });
  const port = Number(new URL(server.url).port);
  // A load balancer's health checks ride one kept-alive connection, opened before the flood.
  const probe = await Deno.connect({ hostname: "127.0.0.1", port });
  const flood: Deno.Conn[] = [];
  try {
    assert.equal((await getOn(probe, "/readyz")).status, 200);
    const descriptors = () => Deno.readDirSync(`/proc/${server.pid}/fd`).toArray().length;
    let peak = descriptors();
    for (let i = 0; i < 1_500; i++) {
      // A listener that stopped accepting fills its queue, then leaves connects unanswered.
      const connecting = Deno.connect({ hostname: "127.0.0.1", port });
      const conn = await Promise.race([connecting, timeout(2_000)]);
      if (conn === undefined) {
        connecting.then((c) => c.close(), () => {});
        break;
      }
      flood.push(conn);
      if (i % 100 === 0) peak = Math.max(peak, descriptors());
    }
    // Every flood connection is held open by the client; the server keeps the cap's worth.
    await eventually(() => descriptors() < openFiles - 300, { what: "refused connections closed" });
    peak = Math.max(peak, descriptors());
    const ready = await getOn(probe, "/readyz");
    assert.equal(ready.status, 503);
    assert.equal((ready.body as { code: number }).code, 503003);
    assert.equal((await getOn(probe, "/healthz")).status, 200);
    console.log(`server descriptors: peak ${peak} of ${openFiles} during a 1500-connection flood`);
    assert.ok(peak < openFiles, `the server held ${peak} descriptors`);
  } finally {
    for (const conn of flood) {
      try {
        conn.close();
      } catch { /* closed by the server */ }
    }
  }
  const ended = performance.now();
  await eventually(async () => await healthzWithin(server.url, 1_000) === 200, {
    timeout: 20_000,
    what: "a new connection served after the flood",
  });
  console.log(`new connections served ${Math.round(performance.now() - ended)} ms after the flood`);
  assert.equal((await getOn(probe, "/readyz")).status, 200);
  probe.close();
  const warning = server.logs.map((l) => JSON.parse(l)).find((l) =>
    l.msg === "max_connections lowered to fit the open-files limit"
  );
  assert.equal(warning?.serving_at_most, 369);
});

/** Resolves with undefined after `ms`, its timer not keeping a test alive. */
function timeout(ms: number): Promise<undefined> {
  return new Promise((resolve) => Deno.unrefTimer(setTimeout(() => resolve(undefined), ms)));
}
