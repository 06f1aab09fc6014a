/**
 * docs/configuration.md agrees with the code on every default: each attribute table's `default`
 * column, where it gives a value (`"info"`, `25`, `false`, `[]`), is the schema's default of that
 * attribute, and the model's retry default is the one the client applies.
 */
import assert from "node:assert/strict";
import { ManifestSchema } from "../../src/config/schema.ts";
import { childSchema, type ZodNode } from "../../src/config/zod_introspect.ts";
import { DEFAULT_RETRY } from "../../src/models/mod.ts";

const DOC = new URL("../../docs/configuration.md", import.meta.url);

/** The block a heading or intro line names: `runtime { storage { ... } }` -> runtime.storage. */
function blockPath(line: string): string[] | undefined {
  const m =
    /^(?:###\s+)?`([a-z_]+(?:\s+"name")?(?:\s*\{\s*[a-z_]+(?:\s+"name")?)*)(?:\s*\{\s*\.\.\.[\s}]*)?`/
      .exec(line);
  if (!m) return undefined;
  return m[1].split(/\s*\{\s*|\s+/).map((t) => t === '"name"' ? "*" : t).filter((t) => t !== "");
}

/** The schema's default at `path` (`*`: a record's value), or `absent` when it has none. */
function schemaDefault(path: string[]): unknown {
  let node: ZodNode | undefined = ManifestSchema as unknown as ZodNode;
  for (const key of path) {
    node = node && childSchema(node, key === "*" ? "x" : key);
  }
  assert.ok(node, `no schema at ${path.join(".")}`);
  for (let def = node._zod.def as Record<string, unknown>; def;) {
    if (def.type === "default" || def.type === "prefault") {
      const value = def.defaultValue;
      return typeof value === "function" ? value() : value;
    }
    const inner = def.innerType as ZodNode | undefined;
    if (!inner) break;
    def = inner._zod.def as Record<string, unknown>;
  }
  return "absent";
}

Deno.test("docs/configuration.md: every default in an attribute table is the schema's", async () => {
  const lines = (await Deno.readTextFile(DOC)).split("\n");
  let block: string[] | undefined;
  let defaultColumn = -1;
  let checked = 0;
  const wrong: string[] = [];
  for (const [i, line] of lines.entries()) {
    const named = blockPath(line);
    if (named) block = named;
    if (!line.startsWith("|")) {
      defaultColumn = -1;
      continue;
    }
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    if (cells[0].startsWith("attribute")) {
      defaultColumn = cells.indexOf("default");
      continue;
    }
    if (defaultColumn < 0 || !block || /^-+$/.test(cells[0])) continue;
    const attribute = /^`([a-z_]+)`$/.exec(cells[0])?.[1];
    const literal = /^`([^`]+)`$/.exec(cells[defaultColumn])?.[1];
    if (!attribute || literal === undefined) continue;
    let documented: unknown;
    try {
      documented = JSON.parse(literal);
    } catch {
      continue; // A path or an expression, not a value.
    }
    const actual = schemaDefault([...block, attribute]);
    checked++;
    try {
      assert.deepEqual(actual, documented);
    } catch {
      wrong.push(
        `docs/configuration.md:${i + 1}: ${[...block, attribute].join(".")} is documented as ` +
          `${literal}, the schema's default is ${JSON.stringify(actual)}`,
      );
    }
  }
  assert.deepEqual(wrong, []);
  assert.ok(checked >= 40, `only ${checked} defaults were read: is the table format the same?`);
});

Deno.test("docs/configuration.md: the model's retry default is the client's", async () => {
  const text = await Deno.readTextFile(DOC);
  const row = text.split("\n").find((l) => l.startsWith("| `retry`"));
  assert.ok(row);
  for (const [key, value] of Object.entries(DEFAULT_RETRY)) {
    assert.ok(row.includes(`\`${key} = ${value}\``), `${key} = ${value} in ${row}`);
  }
});
