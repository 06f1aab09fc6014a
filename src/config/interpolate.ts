/**
 * `${env.NAME}` / `${env.NAME:-default}` interpolation over the normalized tree, with `$${` (and,
 * in HCL, `%%{`) as literal escapes; each interpolated value's origin is recorded for messages.
 */
import { childSchema, scalarKinds, type ZodNode } from "./zod_introspect.ts";
import { formatPath, isPlainObject } from "./tree.ts";

/** What interpolation reads (the environment, the format) and where it reports. */
export interface InterpolationContext {
  /** Values of `${env.NAME}`. */
  env: Record<string, string>;
  /** HCL output escapes literal `%{` as `%%{` and may contain template directives. */
  hcl: boolean;
  /** One line per problem, appended. */
  errors: string[];
  /** Dotted path -> where its value came from, appended to schema errors. */
  origins: Map<string, string>;
}

const ENV_REFERENCE = /^\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*(?::-([\s\S]*))?$/;

/**
 * Replaces `${env.NAME}` / `${env.NAME:-default}` in every string, walking the schema alongside so
 * that a string that is exactly one reference can become the number or boolean its field expects.
 */
export function interpolateTree(
  value: unknown,
  schema: ZodNode | undefined,
  path: (string | number)[],
  ctx: InterpolationContext,
): unknown {
  if (typeof value === "string") return interpolateString(value, schema, path, ctx);
  if (Array.isArray(value)) {
    const element = schema && childSchema(schema, 0);
    return value.map((v, i) => interpolateTree(v, element, [...path, i], ctx));
  }
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map((
        [k, v],
      ) => [k, interpolateTree(v, schema && childSchema(schema, k), [...path, k], ctx)]),
    );
  }
  return value;
}

function interpolateString(
  text: string,
  schema: ZodNode | undefined,
  path: (string | number)[],
  ctx: InterpolationContext,
): unknown {
  if (!text.includes("${") && !(ctx.hcl && text.includes("%{"))) return text;
  let out = "";
  const names: string[] = [];
  let references = 0;
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("$${", i)) {
      out += "${";
      i += 3;
    } else if (ctx.hcl && text.startsWith("%%{", i)) {
      out += "%{";
      i += 3;
    } else if (text.startsWith("${", i)) {
      const end = text.indexOf("}", i + 2);
      if (end < 0) {
        ctx.errors.push(`${formatPath(path)}: unterminated \${ (write $\${ for a literal \${)`);
        return text;
      }
      const expression = text.slice(i + 2, end);
      const match = ENV_REFERENCE.exec(expression);
      if (!match) {
        ctx.errors.push(
          `${formatPath(path)}: unsupported expression \${${expression}}; only \${env.NAME} and ` +
            `\${env.NAME:-default} are supported (write $\${ for a literal \${)`,
        );
        return text;
      }
      const [, name, fallback] = match;
      const set = ctx.env[name];
      // Shell semantics: `:-` also replaces an empty value.
      if (set !== undefined && (fallback === undefined || set !== "")) out += set;
      else if (fallback !== undefined) out += fallback;
      else {
        ctx.errors.push(
          `${formatPath(path)}: environment variable ${name} is not set ` +
            `(set it, or give a default: \${env.${name}:-default})`,
        );
      }
      names.push(name);
      references++;
      i = end + 1;
    } else if (ctx.hcl && text.startsWith("%{", i)) {
      ctx.errors.push(
        `${
          formatPath(path)
        }: template directives (%{ ... }) are not supported (write %%{ for a literal %{)`,
      );
      return text;
    } else {
      out += text[i++];
    }
  }
  if (names.length > 0) {
    ctx.origins.set(formatPath(path), `value from ${names.map((n) => `\${env.${n}}`).join(", ")}`);
  }
  const whole = references === 1 && /^\$\{[^}]*\}$/.test(text);
  return whole && schema ? coerceScalar(out, schema) : out;
}

/** A whole-reference string on a number or boolean field becomes that type (text stays otherwise). */
function coerceScalar(text: string, schema: ZodNode): unknown {
  const kinds = scalarKinds(schema);
  if (kinds.has("string")) return text;
  const trimmed = text.trim();
  if (kinds.has("number") && trimmed !== "" && Number.isFinite(Number(trimmed))) {
    return Number(trimmed);
  }
  if (kinds.has("boolean") && (trimmed === "true" || trimmed === "false")) {
    return trimmed === "true";
  }
  return text;
}
