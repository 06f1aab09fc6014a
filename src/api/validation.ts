/**
 * Zod issues as the spec's validation error (docs/errors.md): the one place where a failing rule
 * gets its code, its params and its message, for every request shape (the HTTP kit's route hook,
 * the engine's `resume_payload`, the add-ons). Messages are ours: a schema may word a rule itself
 * (a pattern's explanation), zod's own texts never reach a client.
 */
import { z } from "zod";
import { errors, type FieldError, type FieldRuleError } from "../errors.ts";

type Issue = z.core.$ZodIssue;
type Schema = z.core.$ZodType;
type Key = PropertyKey;

/**
 * Parses `value` for reporting: inputs are kept on the issues (an absent one is `required`) and a
 * message the schema does not give is left empty, for `fieldErrors` to word.
 */
export function parseInput<T extends z.ZodType>(
  schema: T,
  value: unknown,
): z.ZodSafeParseResult<z.output<T>> {
  return schema.safeParse(value, { reportInput: true, error: () => "" });
}

/** Validates `value` with `schema`; a failure is an ApiError 422 with field paths under `prefix`. */
export function validate<T extends z.ZodType>(schema: T, value: unknown, prefix = ""): z.infer<T> {
  const parsed = parseInput(schema, value);
  if (!parsed.success) throw errors.validation(fieldErrors(schema, parsed.error.issues, prefix));
  return parsed.data;
}

/**
 * The spec's `fields` for the issues of parsing with `schema` (`parseInput`), grouped by dotted
 * path under `prefix`. One error per cause: a rule once per field, a refinement only when nothing
 * else failed, and a string or list that is too short has no form to judge.
 */
export function fieldErrors(
  schema: Schema,
  issues: readonly Issue[],
  prefix = "",
): FieldError[] {
  const byField = new Map<string, Found[]>();
  for (const found of issues.flatMap((issue) => rulesOf(schema, issue, []))) {
    const field = [prefix, ...found.path.map(String)].filter((p) => p !== "").join(".") || "body";
    const list = byField.get(field) ?? [];
    if (!list.some((f) => f.rule.code === found.rule.code)) list.push(found);
    byField.set(field, list);
  }
  return [...byField].map(([field, list]) => ({ field, errors: oneCause(list) }));
}

/** A rule one issue reports, at its path from the schema's root. */
interface Found {
  path: Key[];
  rule: FieldRuleError;
  /** A string or list below its minimum length. */
  short?: boolean;
}

function oneCause(list: Found[]): FieldRuleError[] {
  const short = list.find((f) => f.short);
  if (short) return [short.rule];
  const rules = list.map((f) => f.rule);
  return rules.length > 1 ? rules.filter((r) => r.code !== "invalid") : rules;
}

/** The rules one issue reports. */
function rulesOf(root: Schema, issue: Issue, base: Key[]): Found[] {
  const path = [...base, ...issue.path];
  const one = (rule: FieldRuleError, short?: boolean): Found[] => [{ path, rule, short }];
  const said = issue.message || undefined;
  switch (issue.code) {
    case "unrecognized_keys":
      return issue.keys.map((k) => ({
        path: [...path, k],
        rule: { code: "unknown_field", message: said ?? UNKNOWN },
      }));
    case "custom": {
      // A refinement may name the spec's rule itself (`params: { rule: "format", ... }`).
      const { rule, ...params } = (issue.params ?? {}) as { rule?: string };
      return one(
        rule
          ? { code: rule, message: said ?? INVALID, params }
          : { code: "invalid", message: said ?? INVALID },
      );
    }
  }
  if (issue.input === undefined) return one(REQUIRED);
  switch (issue.code) {
    case "invalid_type": {
      const leaf = schemaAt(root, path);
      const expected = issue.expected === "number" && leaf && isInteger(checksOf(leaf))
        ? "integer"
        : TYPE_NAMES[issue.expected] ?? issue.expected;
      return one(typeRule([expected], said));
    }
    case "too_small":
    case "too_big":
      return one(
        sizeRule(issue, schemaAt(root, path), said),
        issue.code === "too_small" && LENGTHS.has(issue.origin),
      );
    case "invalid_format": {
      const format = declaredFormat(schemaAt(root, path)) ??
        (issue.format === "regex" ? "pattern" : issue.format);
      return one({
        code: "format",
        message: said ?? `is not a valid ${format}`,
        params: { format },
      });
    }
    case "invalid_value":
      return one(enumRule(issue.values, issue.input, said));
    case "invalid_union":
      return unionRules(root, issue, path, said);
    case "not_multiple_of":
      return one({ code: "invalid", message: said ?? `must be a multiple of ${issue.divisor}` });
    default:
      return one({ code: "invalid", message: said ?? INVALID });
  }
}

const INVALID = "is not valid";
const REQUIRED: FieldRuleError = { code: "required", message: "is required" };
/** Origins whose size is a length (`length` rule); the others are numbers (`range`). */
const LENGTHS = new Set(["string", "array", "set", "file"]);
const UNKNOWN = "unknown field";

/** Zod's type names in the words of JSON (and of the OpenAPI document). */
const TYPE_NAMES: Record<string, string> = {
  int: "integer",
  bigint: "integer",
  nan: "number",
  record: "object",
  map: "object",
  tuple: "array",
  set: "array",
};

function article(noun: string): string {
  return noun === "null" ? "null" : /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

function quoted(v: unknown): string {
  return typeof v === "string" ? `'${v}'` : String(v);
}

/**
 * A value outside an allowed set: `enum`, or `type` when the value is not even of the set's type
 * (a number for a string enum).
 */
function enumRule(values: readonly unknown[], input: unknown, said?: string): FieldRuleError {
  const allowed = values.map((v) => (typeof v === "bigint" ? String(v) : v));
  const types = [...new Set(allowed.map(jsonType))];
  if (!types.includes(jsonType(input))) return typeRule(types, said);
  const message = allowed.length === 1
    ? `must be ${quoted(allowed[0])}`
    : `must be one of ${allowed.map(quoted).join(", ")}`;
  return { code: "enum", message: said ?? message, params: { allowed } };
}

/** The `type` rule for values that should have been of one of `types` (JSON names). */
function typeRule(types: string[], said?: string): FieldRuleError {
  return {
    code: "type",
    message: said ?? `must be ${types.map(article).join(" or ")}`,
    params: { expected: types.join(" or ") },
  };
}

function jsonType(v: unknown): string {
  return v === null ? "null" : Array.isArray(v) ? "array" : typeof v;
}

/**
 * A union's rules: a discriminator that names no option is an `enum` (or `required`) on it; when
 * every option refused the value itself, the allowed values together (`enum`) or the types
 * together (`type`); otherwise the first option the value's type matched says what is wrong.
 */
function unionRules(
  root: Schema,
  issue: Extract<Issue, { code: "invalid_union" }>,
  path: Key[],
  said?: string,
): Found[] {
  if (issue.discriminator !== undefined) {
    const value = (issue.input as Record<string, unknown> | undefined)?.[issue.discriminator];
    const options = (issue as { options?: unknown[] }).options ?? [];
    const rule = value === undefined ? REQUIRED : enumRule(options, value, said);
    return [{ path, rule }];
  }
  const atRoot = (branch: Issue[]) =>
    branch.some((i) =>
      i.path.length === 0 && (i.code === "invalid_type" || i.code === "invalid_value")
    );
  const branches: Issue[][] = "errors" in issue ? issue.errors : [];
  const matched = branches.find((branch) => !atRoot(branch));
  if (matched) return matched.flatMap((i) => rulesOf(root, i, path));
  const roots = branches.flat().filter((i) => i.path.length === 0);
  if (roots.every((i) => i.code === "invalid_value")) {
    return [{ path, rule: enumRule(roots.flatMap((i) => i.values), issue.input, said) }];
  }
  const types = roots.flatMap((i) =>
    i.code === "invalid_type" ? [TYPE_NAMES[i.expected] ?? i.expected] : []
  );
  return [{ path, rule: typeRule([...new Set(types)], said) }];
}

/**
 * A `range` (numbers) or `length` (strings, lists) rule with the schema's bounds. Bounds are
 * inclusive (`min`, `max`); an exclusive bound of an integer is the next integer inside it
 * (`> 0` is `min: 1`); one of another number stays exclusive (`exclusive_min`, `exclusive_max`).
 */
function sizeRule(
  issue: Extract<Issue, { code: "too_small" | "too_big" }>,
  leaf: Schema | undefined,
  said?: string,
): FieldRuleError {
  const checks = leaf ? checksOf(leaf) : [issueBound(issue)];
  if (LENGTHS.has(issue.origin)) {
    const unit = issue.origin === "string" ? "character" : "item";
    const min = bound(checks, "min_length", "minimum");
    const max = bound(checks, "max_length", "maximum");
    const message = min !== undefined && max !== undefined
      ? `must have from ${min} to ${max} ${unit}s`
      : min === 1
      ? "must not be empty"
      : min !== undefined
      ? `must have at least ${min} ${unit}s`
      : `must have at most ${max} ${unit}s`;
    return { code: "length", message: said ?? message, params: defined({ min, max }) };
  }
  const integer = issue.origin === "bigint" || isInteger(checks);
  let [min, exMin] = tightest(checks, "greater_than", Math.max);
  let [max, exMax] = tightest(checks, "less_than", Math.min);
  if (integer && exMin !== undefined) {
    [min, exMin] = [Math.max(min ?? -Infinity, Math.floor(exMin) + 1), undefined];
  }
  if (integer && exMax !== undefined) {
    [max, exMax] = [Math.min(max ?? Infinity, Math.ceil(exMax) - 1), undefined];
  }
  // Both kinds on one side: the tighter one is the bound.
  if (min !== undefined && exMin !== undefined) {
    if (exMin >= min) min = undefined;
    else exMin = undefined;
  }
  if (max !== undefined && exMax !== undefined) {
    if (exMax <= max) max = undefined;
    else exMax = undefined;
  }
  const lower = min !== undefined
    ? `at least ${min}`
    : exMin !== undefined
    ? `greater than ${exMin}`
    : undefined;
  const upper = max !== undefined
    ? `at most ${max}`
    : exMax !== undefined
    ? `less than ${exMax}`
    : undefined;
  const message = min !== undefined && max !== undefined
    ? `must be ${integer ? "an integer" : "a number"} from ${min} to ${max}`
    : `must be ${[lower, upper].filter(Boolean).join(" and ")}`;
  return {
    code: "range",
    message: said ?? message,
    params: defined({ min, max, exclusive_min: exMin, exclusive_max: exMax }),
  };
}

type CheckDef = { check: string; [key: string]: unknown };

/** The one bound an issue states, as a check (when the schema at its path cannot be told). */
function issueBound(issue: Extract<Issue, { code: "too_small" | "too_big" }>): CheckDef {
  const length = LENGTHS.has(issue.origin);
  return issue.code === "too_small"
    ? length
      ? { check: "min_length", minimum: issue.minimum }
      : { check: "greater_than", value: issue.minimum, inclusive: issue.inclusive }
    : length
    ? { check: "max_length", maximum: issue.maximum }
    : { check: "less_than", value: issue.maximum, inclusive: issue.inclusive };
}

function checksOf(schema: Schema): CheckDef[] {
  const checks = (schema._zod.def as { checks?: Schema[] }).checks ?? [];
  return checks.map((c) => c._zod.def as unknown as CheckDef);
}

function isInteger(checks: CheckDef[]): boolean {
  return checks.some((c) => c.check === "number_format" && /int/.test(String(c.format)));
}

function bound(checks: CheckDef[], kind: string, key: string): number | undefined {
  const exact = checks.find((c) => c.check === "length_equals");
  if (exact) return Number(exact.length);
  const values = checks.filter((c) => c.check === kind).map((c) => Number(c[key]));
  if (values.length === 0) return undefined;
  return kind === "min_length" ? Math.max(...values) : Math.min(...values);
}

/** The tightest inclusive and exclusive bound of one side: `[inclusive, exclusive]`. */
function tightest(
  checks: CheckDef[],
  kind: string,
  pick: (...n: number[]) => number,
): [number | undefined, number | undefined] {
  const side = checks.filter((c) => c.check === kind);
  const of = (inclusive: boolean) => {
    const values = side.filter((c) => Boolean(c.inclusive) === inclusive).map((c) =>
      Number(c.value)
    );
    return values.length > 0 ? pick(...values) : undefined;
  };
  return [of(true), of(false)];
}

function defined(params: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined));
}

/** The `format` a schema declares (`meta({ format })`, as the OpenAPI document shows it). */
function declaredFormat(schema: Schema | undefined): string | undefined {
  const format = schema && z.globalRegistry.get(schema)?.format;
  return typeof format === "string" ? format : undefined;
}

/**
 * The schema of the value at `path` inside `schema`, through wrappers (optional, nullable,
 * default, ...), pipes (the side that checks the input) and unions (the first option that has the
 * path); undefined when it cannot be told.
 */
function schemaAt(schema: Schema, path: readonly Key[]): Schema | undefined {
  const def = schema._zod.def as unknown as {
    type: string;
    innerType?: Schema;
    in?: Schema;
    out?: Schema;
    getter?: () => Schema;
    options?: Schema[];
    shape?: Record<Key, Schema>;
    element?: Schema;
    valueType?: Schema;
  };
  if (def.innerType) return schemaAt(def.innerType, path);
  if (def.type === "pipe") {
    return schemaAt(def.in!._zod.def.type === "transform" ? def.out! : def.in!, path);
  }
  if (def.type === "lazy") return schemaAt(def.getter!(), path);
  if (def.type === "union") {
    if (path.length === 0) return undefined;
    for (const option of def.options!) {
      const found = schemaAt(option, path);
      if (found) return found;
    }
    return undefined;
  }
  if (path.length === 0) return schema;
  const [key, ...rest] = path;
  const next = def.type === "object"
    ? def.shape![key]
    : def.type === "array"
    ? def.element
    : def.type === "record"
    ? def.valueType
    : undefined;
  return next && schemaAt(next, rest);
}
