/**
 * The store opened at start: the log says which and the migrations it applied, and a store that
 * cannot be opened is an error naming it, its masked URL and what to check.
 */
import assert from "node:assert/strict";
import { parseConfig } from "../src/config/load.ts";
import { createLogger } from "../src/log.ts";
import { openConfiguredStore, StoreOpenError } from "../src/server_store.ts";

async function config(storage: string, env: Record<string, string> = {}) {
  return await parseConfig(
    `agent {\n  name = "s"\n}\nruntime {\n  storage {\n${storage}\n  }\n}\n`,
    { filename: "agent.hcl", env },
  );
}

Deno.test("opening the store says which, where and the migrations it applied", async () => {
  const lines: string[] = [];
  const log = createLogger("info", {}, (line) => lines.push(line));
  const store = await openConfiguredStore(await config(`path = ":memory:"`), log, undefined);
  await store.close();
  const records = lines.map((l) => JSON.parse(l));
  assert.deepEqual(records.map((r) => r.msg), ["opening store", "migrations applied"]);
  assert.equal(records[0].store, "sqlite");
  assert.equal(records[0].at, ":memory:");
  assert.equal(records[1].migrations[0], "0001_initial");
});

Deno.test("an unreachable PostgreSQL is named with its masked URL and what to check", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  const url = `postgres://agent:hunter22secret@127.0.0.1:${port}/agentd`;
  const lines: string[] = [];
  const log = createLogger("info", {}, (line) => lines.push(line));
  const error = await openConfiguredStore(
    await config(`url = "${url}"\n    timeout = 2000`),
    log,
    undefined,
  ).then(() => undefined, (e) => e);
  assert.ok(error instanceof StoreOpenError, String(error));
  assert.ok(
    error.message.startsWith(
      `could not open the postgres store at postgres://agent:****@127.0.0.1:${port}/agentd: `,
    ),
    error.message,
  );
  assert.match(error.message, /; check that PostgreSQL runs and accepts connections there/);
  assert.ok(!error.message.includes("hunter22secret"));
  assert.ok(!lines.join("\n").includes("hunter22secret"));
});
