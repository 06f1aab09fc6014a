/**
 * Starts a real agentd server on a free loopback port for a test: SQLite in a temp file, or
 * PostgreSQL in a schema of its own that is dropped afterwards. Declare it with `await using` and
 * it is closed (and its files and schema removed) when the scope ends, pass or fail.
 */
import { AgentdClient } from "../../client/mod.ts";
import { ManifestSchema } from "../../src/config/schema.ts";
import type { Config } from "../../src/config/schema.ts";
import { createLogger } from "../../src/log.ts";
import { type RunningServer, startServer } from "../../src/server.ts";
import { TestClock } from "./clock.ts";
import { dropSchema, testPostgresUrl, uniqueName } from "./services.ts";

/** Which store a test server uses. */
export type StoreKind = "sqlite" | "postgres";

/** A test server: its base URL, the server, and a `close()` that removes everything it made. */
export interface TestServer extends AsyncDisposable {
  url: string;
  server: RunningServer;
  config: Config;
  /** The clock of the server's records: `t.clock.advance()` instead of sleeping for a new ms. */
  clock: TestClock;
  /** Every JSON log line the server wrote (at level debug), in order. */
  logs: string[];
  /** The official client (`client/`) of the server, for the default tenant. */
  client: AgentdClient;
  /** Fetches a path of the server with optional JSON body and tenant. */
  fetch(path: string, init?: RequestInit & { json?: unknown; tenant?: string }): Promise<Response>;
  close(): Promise<void>;
}

/** Options of `startTestServer`. */
export interface TestServerOptions {
  store?: StoreKind;
  /** Manifest fields merged over the test default (shallow per top-level block). */
  manifest?: Record<string, unknown>;
  /** Reuse this PostgreSQL schema / SQLite path (several replicas sharing one store). */
  shared?: { schema?: string; path?: string };
  replicaId?: string;
  /** The clock to use (several replicas sharing one); a new `TestClock` by default. */
  clock?: TestClock;
}

/** Starts a server for a test. */
export async function startTestServer(options: TestServerOptions = {}): Promise<TestServer> {
  const kind = options.store ?? "sqlite";
  const dir = await Deno.makeTempDir({ prefix: "agentd_test_" });
  const schema = options.shared?.schema ?? uniqueName("agentd_test");
  const storage = kind === "postgres"
    ? { kind: "postgres", url: testPostgresUrl, schema }
    : { kind: "sqlite", path: options.shared?.path ?? `${dir}/agentd.db` };
  if (kind === "postgres" && !testPostgresUrl) {
    throw new Error("AGENTD_TEST_POSTGRES_URL is not set");
  }
  const m = options.manifest ?? {};
  const manifest = ManifestSchema.parse({
    agent: { name: "test-agent", model: { provider: "echo" }, ...(m.agent as object) },
    ...m,
    runtime: {
      default_tenant_id: "default",
      ...(m.runtime as object),
      storage,
      replica: {
        poll_interval: 100,
        heartbeat_interval: 200,
        lease: 2000,
        ...((m.runtime as { replica?: object })?.replica),
      },
    },
    http_server: { port: 0, keepalive: 15_000, ...(m.http_server as object) },
  });
  const config: Config = { manifest, baseDir: dir };
  const logs: string[] = [];
  const clock = options.clock ?? new TestClock();
  const server = await startServer(config, {
    host: "127.0.0.1",
    port: 0,
    log: createLogger("debug", {}, (line) => logs.push(line)),
    replicaId: options.replicaId,
    clock,
  });
  let closing: Promise<void> | undefined;
  const close = () =>
    closing ??= (async () => {
      await server.shutdown(0);
      if (kind === "postgres" && !options.shared?.schema) await dropSchema(schema);
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    })();
  return {
    url: server.url,
    server,
    config,
    clock,
    logs,
    client: new AgentdClient({ baseUrl: server.url }),
    fetch(path, init = {}) {
      const headers = new Headers(init.headers);
      if (init.tenant !== undefined) headers.set("x-tenant-id", init.tenant);
      let body = init.body;
      if (init.json !== undefined) {
        headers.set("content-type", "application/json");
        body = JSON.stringify(init.json);
      }
      return fetch(server.url + path, { ...init, headers, body });
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** The store kinds to run a suite against: SQLite always, PostgreSQL when configured. */
export const storeKinds: StoreKind[] = testPostgresUrl ? ["sqlite", "postgres"] : ["sqlite"];
