/**
 * Structured logs: one line per request and per run transition (started, cancel requested,
 * finished with status, interrupted by the sweeper and by shutdown), each with the request id,
 * tenant and run id; the level from the configuration (`AGENT__RUNTIME__LOG_LEVEL`); and no
 * secret in any line (redaction by field name, URL credentials, bearer tokens, configured values).
 */
import assert from "node:assert/strict";
import { createLogger, redact, withLogContext, withSecrets } from "../src/log.ts";
import { REDACTED, secretValues } from "../src/secrets.ts";
import { parseConfig } from "../src/config/load.ts";
import { startServer } from "../src/server.ts";
import { eventually, pacedModel, readEvents, readSse, startTestServer } from "./_kit/mod.ts";

type Line = Record<string, unknown>;

const API_KEY = "sk-live-0123456789abcdefSECRET";
const PUBSUB_TOKEN = "upstash-token-ABCDEFGHIJKLMNOP";

function parse(lines: string[]): Line[] {
  return lines.map((l) => {
    const record = JSON.parse(l);
    assert.equal(typeof record.time, "string");
    assert.match(String(record.level), /^(debug|info|warn|error)$/);
    assert.equal(typeof record.msg, "string");
    return record;
  });
}

function find(lines: string[], msg: string, fields: Line): Line {
  const hit = parse(lines).find((l) =>
    l.msg === msg && Object.entries(fields).every(([k, v]) => l[k] === v)
  );
  assert.ok(hit, `no "${msg}" line with ${JSON.stringify(fields)} in:\n${lines.join("\n")}`);
  return hit;
}

function runBody(text: string, extra: Record<string, unknown> = {}) {
  return { messages: [{ role: "user", content: [{ type: "text", value: text }] }], ...extra };
}

const SLOW = { model: pacedModel(300) };

Deno.test("redact hides secrets by field name, inside URLs and headers, and by value", () => {
  const out = redact({
    api_key: "abc",
    headers: { Authorization: "Bearer abc.def", "x-api-key": "k" },
    storage: { url: "postgres://agent:hunter22@db:5432/agentd", password: "p" },
    error: new Error(`openai said: Incorrect API key provided: ${API_KEY}`),
    note: "redis://:s3cret-pass@cache:6379 and Basic dXNlcjpwYXNz",
    nested: [{ token: "t", tokens: 12, max_tokens: 5 }],
    plain: `value ${PUBSUB_TOKEN} inside`,
    empty_token: "",
  }, [PUBSUB_TOKEN]) as Record<string, unknown>;
  const text = JSON.stringify(out);
  for (
    const secret of ["abc.def", "hunter22", "s3cret-pass", "dXNlcjpwYXNz", API_KEY, PUBSUB_TOKEN]
  ) {
    assert.ok(!text.includes(secret), `${secret} is hidden in ${text}`);
  }
  assert.equal(out.api_key, REDACTED);
  assert.deepEqual(out.headers, { Authorization: REDACTED, "x-api-key": REDACTED });
  assert.deepEqual(out.storage, {
    url: `postgres://agent:${REDACTED}@db:5432/agentd`,
    password: REDACTED,
  });
  assert.deepEqual(out.nested, [{ token: REDACTED, tokens: 12, max_tokens: 5 }]);
  assert.equal(out.plain, `value ${REDACTED} inside`);
  assert.equal(out.empty_token, "", "nothing to hide");
});

Deno.test("createLogger: level, request context, secrets", () => {
  const lines: string[] = [];
  const log = createLogger("info", { app: "t" }, (l) => lines.push(l), { secrets: [API_KEY] });
  log.debug("hidden");
  log.info("shown", { key: API_KEY });
  withLogContext({ request_id: "r-1" }, () => log.with({ run_id: "x" }).warn("in a request"));
  const records = parse(lines);
  assert.deepEqual(records.map((r) => r.msg), ["shown", "in a request"]);
  assert.equal(records[0].key, REDACTED);
  assert.equal(records[0].app, "t");
  assert.equal(records[1].request_id, "r-1");
  assert.equal(records[1].run_id, "x");
  assert.equal(records[0].request_id, undefined, "outside the request, no request id");

  const outer: string[] = [];
  const wrapped = withSecrets(createLogger("debug", {}, (l) => outer.push(l)), [API_KEY]);
  wrapped.with({ note: `k=${API_KEY}` }).info(`msg ${API_KEY}`, { deep: { v: API_KEY } });
  assert.ok(!outer.join("\n").includes(API_KEY), outer.join("\n"));

  const secrets = secretValues({
    manifest: {
      agent: { model: { api_key: API_KEY } },
      runtime: {
        storage: { url: "postgres://u:db-password-1@h/d" },
        pubsub: { url: "rediss://:redis-password-2@h:6380", token: PUBSUB_TOKEN },
      },
      http_server: {
        auth: {
          api_keys: ["client-key-0123456789"],
          api_key: { acme: { key: "acme-key-0123456789", tenant: "acme" } },
        },
      },
    },
  }, { OPENAI_API_KEY: "sk-env-0123456789abcdef", HOME: "/root", SHORT_TOKEN: "default" });
  for (
    const s of [
      API_KEY,
      PUBSUB_TOKEN,
      "db-password-1",
      "redis-password-2",
      "client-key-0123456789",
      "acme-key-0123456789",
    ]
  ) {
    assert.ok(secrets.includes(s), s);
  }
  assert.ok(secrets.includes("sk-env-0123456789abcdef"));
  assert.ok(!secrets.includes("/root") && !secrets.includes("default"));
  assert.ok(!secrets.includes("acme"), "a key's bound tenant is not a secret");
});

Deno.test("a server logs every request and run transition with its ids, and no secret", async () => {
  await using t = await startTestServer({
    manifest: {
      agent: { name: "log-test", model: { provider: "echo", api_key: API_KEY } },
      runtime: { pubsub: { kind: "memory", token: PUBSUB_TOKEN }, replica: { lease: 500 } },
    },
  });
  // An attached run: its request line, then started and finished with the request's id.
  const res = await t.fetch("/v1/runs", {
    method: "POST",
    json: runBody("hello there"),
    tenant: "acme",
    headers: { "x-request-id": "req-attached-1", authorization: `Bearer ${API_KEY}` },
  });
  assert.equal(res.headers.get("x-request-id"), "req-attached-1");
  const events = await readEvents(res);
  const runId = String(events[0].run_id);
  await eventually(() => {
    find(t.logs, "request", {
      request_id: "req-attached-1",
      tenant: "acme",
      method: "POST",
      path: "/v1/runs",
      status: 200,
    });
    find(t.logs, "run started", {
      request_id: "req-attached-1",
      tenant: "acme",
      run_id: runId,
      attached: true,
    });
    const finished = find(t.logs, "run finished", {
      request_id: "req-attached-1",
      tenant: "acme",
      run_id: runId,
      status: "completed",
    });
    assert.equal(typeof finished.ms, "number");
    assert.equal(finished.session_id, events[0].session_id);
    return true;
  });

  // A detached run cancelled by another request: the cancel is logged with that request's id.
  const start = await t.fetch("/v1/runs/start", {
    method: "POST",
    json: runBody("one two three four five six seven eight", { run_id: "r-cancel", ...SLOW }),
    tenant: "acme",
    headers: { "x-request-id": "req-start-2" },
  });
  assert.equal(start.status, 202);
  const cancel = await t.fetch("/v1/runs/r-cancel/cancel", {
    method: "PUT",
    tenant: "acme",
    headers: { "x-request-id": "req-cancel-2" },
  });
  assert.equal(cancel.status, 204);
  await eventually(() => {
    find(t.logs, "run cancel requested", {
      request_id: "req-cancel-2",
      tenant: "acme",
      run_id: "r-cancel",
      status: "cancelled",
    });
    find(t.logs, "run finished", {
      request_id: "req-start-2",
      tenant: "acme",
      run_id: "r-cancel",
      status: "cancelled",
      reason: "cancelled",
    });
    return true;
  });

  // The sweeper resumes a run whose replica stopped heartbeating (a row nobody executes).
  await t.server.store.createRun("acme", {
    run_id: "r-ghost",
    session_id: "s-ghost",
    parent_checkpoint_id: null,
    owner: "replica-gone",
    create_session: true,
  });
  await eventually(() => {
    find(t.logs, "run resumed: its replica was lost or handed it over", {
      tenant: "acme",
      run_id: "r-ghost",
      owner: "replica-gone",
      attempt: 2,
      reason: "lost",
    });
    return true;
  });

  // Secrets a client puts in a path or a request id never reach a line.
  const leak = await t.fetch(`/v1/runs/${API_KEY}`, {
    headers: { "x-request-id": API_KEY, authorization: `Bearer ${API_KEY}` },
  });
  assert.equal(leak.status, 404);
  await leak.body?.cancel();
  await eventually(() => {
    find(t.logs, "request", { path: `/v1/runs/${REDACTED}`, request_id: REDACTED });
    return true;
  });

  // Shutdown with no grace hands a running run over (released for another attempt).
  const slow = await t.fetch("/v1/runs/start", {
    method: "POST",
    json: runBody("one two three four five six seven eight", { run_id: "r-shutdown", ...SLOW }),
  });
  assert.equal(slow.status, 202);
  await t.close();
  find(t.logs, "run handed over", {
    tenant: "default",
    run_id: "r-shutdown",
    attempt: 1,
    reason: "handoff",
    released: true,
  });

  const all = t.logs.join("\n");
  assert.ok(!all.includes(API_KEY), "the model API key is never logged");
  assert.ok(!all.includes(PUBSUB_TOKEN), "the pub/sub token is never logged");
});

Deno.test("the level comes from runtime.log_level / AGENT__RUNTIME__LOG_LEVEL", async () => {
  const manifest = `
agent {
  name = "levels"
}
runtime {
  log_level = "info"
  storage {
    path = ":memory:"
  }
}
http_server {
  port = 0
}
`;
  for (
    const [env, expectRequests] of [[{}, true], [
      { AGENT__RUNTIME__LOG_LEVEL: "warn" },
      false,
    ]] as const
  ) {
    const config = await parseConfig(manifest, { filename: "agent.hcl", env });
    const lines: string[] = [];
    const server = await startServer(config, {
      host: "127.0.0.1",
      port: 0,
      logWrite: (l) => lines.push(l),
    });
    try {
      const res = await fetch(`${server.url}/healthz`);
      await res.body?.cancel();
      await readSse(
        await fetch(`${server.url}/v1/runs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(runBody("hi")),
        }),
      ).all();
    } finally {
      await server.shutdown(0);
    }
    const records = parse(lines);
    assert.equal(
      records.some((r) => r.msg === "request"),
      expectRequests,
      `${JSON.stringify(env)}: ${lines.join("\n")}`,
    );
    if (!expectRequests) assert.ok(records.every((r) => r.level === "warn" || r.level === "error"));
  }
});
