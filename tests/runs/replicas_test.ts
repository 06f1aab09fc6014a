/**
 * Two real server processes sharing PostgreSQL and Redis, as two replicas behind a load balancer:
 * re-attach across replicas, cancel across replicas, and a replica killed mid-run.
 */
import assert from "node:assert/strict";
import {
  dropSchema,
  eventually,
  readEvents,
  readSse,
  skipNotice,
  tempDir,
  testPostgresUrl,
  testRedisUrl,
  uniqueName,
} from "../_kit/mod.ts";

const enabled = Boolean(testPostgresUrl && testRedisUrl);
if (!enabled) skipNotice("the replica suite", "AGENTD_TEST_POSTGRES_URL and AGENTD_TEST_REDIS_URL");

const LEASE_MS = 1500;

/** A replica process; disposing it kills what is still running. */
interface Replica extends AsyncDisposable {
  url: string;
  child: Deno.ChildProcess;
  stop(signal?: Deno.Signal): Promise<Deno.CommandStatus>;
}

/** Starts `main.ts serve` on a free port and waits for its "listening" log line. */
async function startReplica(manifestPath: string, name: string): Promise<Replica> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--no-prompt",
      "--unstable-worker-options",
      "main.ts",
      "serve",
      manifestPath,
      "--port",
      "0",
    ],
    env: { AGENT__REPLICA__ID: name },
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let url: string | undefined;
  const deadline = Date.now() + 20_000;
  while (!url) {
    if (Date.now() > deadline) throw new Error(`${name} did not start: ${buffer}`);
    const { done, value } = await lines.read();
    if (done) throw new Error(`${name} exited: ${buffer}`);
    buffer += value;
    for (const line of buffer.split("\n")) {
      if (line.includes('"listening"')) url = JSON.parse(line).url;
    }
  }
  // Keep draining stderr so the child never blocks on a full pipe.
  (async () => {
    try {
      while (!(await lines.read()).done) { /* drain */ }
    } catch { /* closed */ }
  })();
  let status: Promise<Deno.CommandStatus> | undefined;
  const stop = (signal: Deno.Signal = "SIGTERM") => {
    if (!status) {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
      status = child.status;
    }
    return status;
  };
  return { url, child, stop, [Symbol.asyncDispose]: async () => void await stop("SIGKILL") };
}

const text = (value: string) => ({ role: "user", content: [{ type: "text", value }] });
const slow = (ms: number) => ({
  override: { inference_params: { provider_params: { delay_ms: ms } } },
});

async function start(url: string, body: unknown): Promise<{ run_id: string; session_id: string }> {
  const res = await fetch(`${url}/v1/runs/start`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 202);
  return await res.json();
}

async function status(url: string, runId: string): Promise<Record<string, unknown>> {
  return await (await fetch(`${url}/v1/runs/${runId}`)).json();
}

Deno.test({
  name: "replicas share PostgreSQL and Redis",
  ignore: !enabled,
  sanitizeResources: false,
  sanitizeOps: false,
}, async (tt) => {
  await using dir = await tempDir("agentd_replicas_");
  const schema = uniqueName("agentd_replicas");
  await using cleanup = new AsyncDisposableStack();
  cleanup.defer(() => dropSchema(schema));
  const manifest = {
    agent: { name: "replicas", model: { provider: "echo" } },
    runtime: {
      storage: { url: testPostgresUrl, schema },
      pubsub: { kind: "redis", url: testRedisUrl, prefix: uniqueName("agentd") },
      replica: {
        heartbeat_interval: 200,
        lease: LEASE_MS,
        poll_interval: 100,
        shutdown_grace: 500,
      },
      log_level: "info",
    },
    http_server: { host: "127.0.0.1", port: 0 },
  };
  const path = dir.join("agent.json");
  await Deno.writeTextFile(path, JSON.stringify(manifest));
  await using a = await startReplica(path, "replica-a");
  await using b = await startReplica(path, "replica-b");
  await tt.step("a detached run started on A is re-attached on B", async () => {
    const { run_id } = await start(a.url, {
      messages: [text("one two three four five six seven eight")],
      model: slow(80),
    });
    const res = await fetch(`${b.url}/v1/runs/${run_id}/events`);
    assert.equal(res.status, 200);
    const events = await readEvents(res);
    assert.ok(events.some((e) => e.kind === "text_message_content"), "B got live tokens");
    assert.equal(events.at(-1)!.kind, "run_finished");
    assert.equal(events.at(-1)!.status, "completed");
    assert.equal((await status(b.url, run_id)).status, "completed");
  });

  await tt.step("a cancel sent to B stops the run on A within 1 s", async () => {
    const { run_id } = await start(a.url, {
      messages: [text("a b c d e f g h i j k l m n o p q r s t")],
      model: slow(200),
    });
    // Cancel once A streams tokens.
    const watch = readSse(await fetch(`${a.url}/v1/runs/${run_id}/events`));
    await watch.until("text_message_content");
    const sent = Date.now();
    const res = await fetch(`${b.url}/v1/runs/${run_id}/cancel`, { method: "PUT" });
    assert.equal(res.status, 204);
    const events = (await watch.json()) as { kind: string; status?: string }[];
    const elapsed = Date.now() - sent;
    assert.equal(events.at(-1)!.kind, "run_finished");
    assert.equal(events.at(-1)!.status, "cancelled");
    assert.ok(elapsed < 1000, `A stopped after ${elapsed} ms`);
    assert.equal((await status(a.url, run_id)).status, "cancelled");
  });

  await tt.step("A killed with SIGKILL mid-run: B's sweeper marks it interrupted", async () => {
    const { run_id } = await start(a.url, {
      messages: [text("x ".repeat(100))],
      model: slow(100),
    });
    // Kill A once it streams tokens (mid-run).
    {
      await using watch = readSse(await fetch(`${b.url}/v1/runs/${run_id}/events`));
      await watch.until("text_message_content");
    }
    assert.equal((await status(b.url, run_id)).status, "running");
    const killed = Date.now();
    await a.stop("SIGKILL");
    const run = await eventually(async () => {
      const run = await status(b.url, run_id);
      return run.status !== "running" ? run : undefined;
    }, { timeout: LEASE_MS * 4, interval: 100, what: "B's sweeper to end the run" });
    const after = Date.now() - killed;
    assert.equal(run.status, "interrupted");
    assert.equal((run.error as { code: string }).code, "replica_lost");
    assert.ok(after < LEASE_MS * 3, `swept after ${after} ms (lease ${LEASE_MS} ms)`);
  });

  await tt.step("B stops gracefully on SIGTERM", async () => {
    assert.equal((await b.stop("SIGTERM")).code, 0, "graceful shutdown exits 0");
  });
});
