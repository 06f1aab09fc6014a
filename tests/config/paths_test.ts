/** Path resolution (`src/config/paths.ts`): the storage kind and absolute file paths. */
import assert from "node:assert/strict";
import { resolve } from "node:path";
import { DEFAULT_SQLITE_PATH } from "../../src/config/paths.ts";
import { assertSome, hcl, MINIMAL, problems } from "./helpers.ts";

Deno.test("storage: default SQLite file under the working directory", async () => {
  const { manifest } = await hcl(MINIMAL);
  assert.deepEqual(manifest.runtime.storage, {
    kind: "sqlite",
    path: resolve(Deno.cwd(), DEFAULT_SQLITE_PATH),
    timeout: 5000,
  });
});

Deno.test("storage: a relative path resolves against the manifest directory", async () => {
  const text = (path: string) => `${MINIMAL}runtime {\n  storage {\n    path = "${path}"\n  }\n}\n`;
  assert.equal(
    (await hcl(text("data/agent.db"))).manifest.runtime.storage.path,
    "/srv/agent/data/agent.db",
  );
  assert.equal((await hcl(text("/var/lib/a.db"))).manifest.runtime.storage.path, "/var/lib/a.db");
  assert.equal((await hcl(text(":memory:"))).manifest.runtime.storage.path, ":memory:");
  // From the environment it is relative to the shell's directory, not the manifest's.
  const fromEnv = await hcl(MINIMAL, { AGENT__STORAGE__PATH: "x.db" });
  assert.equal(fromEnv.manifest.runtime.storage.path, resolve(Deno.cwd(), "x.db"));
});

Deno.test("storage: a postgres URL selects PostgreSQL", async () => {
  const { manifest } = await hcl(
    `${MINIMAL}runtime {\n  storage {\n    path = "dev.db"\n  }\n}\n`,
    { AGENT__STORAGE__URL: "postgresql://u:pw@db:5432/agentd" },
  );
  assert.deepEqual(manifest.runtime.storage, {
    kind: "postgres",
    url: "postgresql://u:pw@db:5432/agentd",
    timeout: 5000,
  });
  const lines = await problems(
    hcl(`${MINIMAL}runtime {\n  storage {\n    kind = "postgres"\n  }\n}\n`),
  );
  assertSome(lines, /^runtime\.storage\.url: required when kind = "postgres"/);
  const notPg = await problems(hcl(MINIMAL, { AGENT__STORAGE__URL: "mysql://u:pw@db/x" }));
  assertSome(notPg, /^runtime\.storage\.url: expected a postgres:\/\/ .*mysql:\/\/u:\*\*\*\*@db/);
});

Deno.test("tool modules resolve against the manifest directory", async () => {
  const { manifest } = await hcl(`${MINIMAL}
tool "a" {
  kind = "javascript"
  module = "./tools/a.ts"
}
tool "b" {
  kind = "javascript"
  module = "https://example.com/b.ts"
}
tool "c" {
  kind = "python"
  module = "/opt/tools/c.py"
  function = "c"
}
`);
  assert.equal(manifest.tool.a.module, "/srv/agent/tools/a.ts");
  assert.equal(manifest.tool.b.module, "https://example.com/b.ts");
  assert.equal(manifest.tool.c.module, "/opt/tools/c.py");
});

Deno.test("storage: kind sqlite with a PostgreSQL URL is a conflict; a blank path is the default", async () => {
  const storage = (body: string) => `${MINIMAL}runtime {\n  storage {\n${body}\n  }\n}\n`;
  const conflict = await problems(
    hcl(storage(`    kind = "sqlite"`), { AGENT__STORAGE__URL: "postgres://db/agentd" }),
  );
  assert.deepEqual(conflict, [
    'runtime.storage.kind: "sqlite" conflicts with the PostgreSQL url; remove one of them',
  ]);
  const blank = await hcl(storage(`    path = "  "\n    url = " "`));
  assert.deepEqual(blank.manifest.runtime.storage, {
    kind: "sqlite",
    path: resolve(Deno.cwd(), DEFAULT_SQLITE_PATH),
    timeout: 5000,
  });
});
