/**
 * Every recording of `fixtures/` has its origin written in `fixtures/SOURCES.md`, and every file
 * the table names exists: no stream here without a public source.
 */
import assert from "node:assert/strict";
import { recording } from "./server.ts";

const FIXTURES = new URL("./fixtures/", import.meta.url);

function filesUnder(url: URL, prefix = ""): string[] {
  return [...Deno.readDirSync(url)].flatMap((e) =>
    e.isDirectory
      ? filesUnder(new URL(`${e.name}/`, url), `${prefix}${e.name}/`)
      : [`${prefix}${e.name}`]
  );
}

Deno.test("replay fixtures: each file has its origin in SOURCES.md", () => {
  const table = Deno.readTextFileSync(new URL("SOURCES.md", FIXTURES));
  const listed = [...table.matchAll(/^\| `([^`]+)` \| (\w+) \| (.+?) \|/gm)];
  const keys = new Set([...table.matchAll(/^\| (\w+) \| `[^`]+`/gm)].map((m) => m[1]));
  const files = filesUnder(FIXTURES).filter((f) => f !== "SOURCES.md").sort();
  assert.deepEqual(listed.map((m) => m[1]).sort(), files);
  for (const [, file, key, origin] of listed) {
    assert.ok(keys.has(key), `${file}: the repository key ${key} is in the table of repositories`);
    assert.ok(origin.trim().length > 0, `${file} names its path`);
  }
});

Deno.test("replay fixtures: every recording loads in its wire format", () => {
  for (const file of filesUnder(FIXTURES)) {
    if (file === "SOURCES.md" || file.endsWith(".request.json")) continue;
    const rec = recording(file);
    assert.ok(rec.body.length > 0, file);
  }
});
