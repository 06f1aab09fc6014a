/**
 * Reading zod v4 schema definitions: the schema of a place in the manifest, its keys and the
 * scalar kinds it accepts, for interpolation's coercion and for validation messages' hints.
 */

/** The part of a zod v4 definition we read. */
interface ZodDef {
  type: string;
  innerType?: ZodNode;
  in?: ZodNode;
  shape?: Record<string, ZodNode>;
  valueType?: ZodNode;
  element?: ZodNode;
  options?: ZodNode[];
}

/** Any zod schema, seen through its definition. */
export type ZodNode = { _zod: { def: unknown } };

const WRAPPERS = new Set([
  "optional",
  "nullable",
  "default",
  "prefault",
  "nonoptional",
  "readonly",
  "catch",
]);

function defOf(schema: ZodNode): ZodDef {
  let def = schema._zod.def as ZodDef;
  while (WRAPPERS.has(def.type) && def.innerType) def = def.innerType._zod.def as ZodDef;
  if (def.type === "pipe" && def.in) return defOf(def.in);
  return def;
}

/** The schema of `key` (an object key, record value or array element) inside `schema`. */
export function childSchema(schema: ZodNode, key: string | number): ZodNode | undefined {
  const def = defOf(schema);
  if (def.type === "object" && typeof key === "string") return def.shape?.[key];
  if (def.type === "record" && typeof key === "string") return def.valueType;
  if (def.type === "array") return def.element;
  if (def.type === "union") {
    for (const option of def.options ?? []) {
      const found = childSchema(option, key);
      if (found) return found;
    }
  }
  return undefined;
}

/** The schema at a path below `schema`, or undefined where the schema does not reach. */
export function schemaAt(schema: ZodNode, path: (string | number)[]): ZodNode | undefined {
  let here: ZodNode | undefined = schema;
  for (const key of path) here = here && childSchema(here, key);
  return here;
}

/** The keys an object schema accepts (none for any other schema). */
export function objectKeys(schema: ZodNode): string[] {
  const def = defOf(schema);
  return def.type === "object" ? Object.keys(def.shape ?? {}) : [];
}

/** The kinds a schema accepts (`string`, `number`, `boolean` or a zod type name), unions merged. */
export function scalarKinds(schema: ZodNode): Set<string> {
  const def = defOf(schema);
  if (def.type === "union") {
    return new Set((def.options ?? []).flatMap((o) => [...scalarKinds(o)]));
  }
  if (def.type === "number" || def.type === "int") return new Set(["number"]);
  if (def.type === "boolean") return new Set(["boolean"]);
  if (def.type === "string" || def.type === "enum" || def.type === "literal") {
    return new Set(["string"]);
  }
  return new Set([def.type]);
}
