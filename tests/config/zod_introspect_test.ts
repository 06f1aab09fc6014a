/** Reading zod schema definitions (`src/config/zod_introspect.ts`) over the manifest schema. */
import assert from "node:assert/strict";
import { ManifestSchema } from "../../src/config/schema.ts";
import {
  childSchema,
  objectKeys,
  scalarKinds,
  schemaAt,
  type ZodNode,
} from "../../src/config/zod_introspect.ts";

/** The schema at `path` of the manifest, which must exist. */
function at(path: (string | number)[]): ZodNode {
  const node = schemaAt(ManifestSchema, path);
  assert.ok(node, `no schema at ${path.join(".")}`);
  return node;
}

Deno.test("schemaAt sees through optional, default, refined, record and array schemas", () => {
  assert.deepEqual(objectKeys(at(["agent", "model", "retry"])), [
    "max_attempts",
    "initial_backoff",
    "max_backoff",
  ]);
  assert.deepEqual([...scalarKinds(at(["agent", "max_steps"]))], ["number"]);
  assert.deepEqual([...scalarKinds(at(["runtime", "log_level"]))], ["string"]);
  assert.deepEqual([...scalarKinds(at(["tool", "any", "requires_approval"]))], ["boolean"]);
  assert.deepEqual(
    [...scalarKinds(at(["agent", "model", "inference_params", "stop_sequences", 0]))],
    ["string"],
  );
  assert.deepEqual([...scalarKinds(at(["tool", "any", "parameters", "x"]))], ["unknown"]);
});

Deno.test("a union's kinds are merged; a place the schema does not reach has none", () => {
  assert.deepEqual([...scalarKinds(at(["tool", "any", "permissions", "net"]))], [
    "boolean",
    "array",
  ]);
  assert.equal(schemaAt(ManifestSchema, ["agent", "nope"]), undefined);
  assert.equal(schemaAt(ManifestSchema, ["agent", "name", "deeper"]), undefined);
  assert.equal(childSchema(ManifestSchema, 0), undefined);
  assert.deepEqual(objectKeys(at(["agent", "name"])), []);
});
