/**
 * Block normalizing: the parsed tree (hcl2json's block lists, or JSON in either shape) -> the
 * normalized form the schema validates, single blocks as objects and labelled blocks as records.
 */
import { formatPath, isPlainObject } from "./tree.ts";

/** Which names are blocks: `single` ones appear at most once, `labelled` ones are keyed by label. */
export interface BlockSpec {
  single?: Record<string, BlockSpec>;
  labelled?: Record<string, BlockSpec>;
}

/** The manifest's blocks (docs/configuration.md); every other name is an attribute. */
export const MANIFEST_BLOCKS: BlockSpec = {
  single: {
    agent: { single: { model: { single: { inference_params: {}, retry: {} } } } },
    runtime: {
      single: { storage: {}, pubsub: {}, replica: {}, runs: {}, attached: {}, tools: {} },
    },
    http_server: {
      single: {
        protocol: { single: { ag_ui: {}, a2a: { labelled: { extension: {} } }, ai_sdk: {} } },
        auth: { labelled: { api_key: {} } },
        cors: {},
      },
    },
  },
  labelled: {
    capability: {},
    tool: { single: { permissions: {}, limits: {} } },
    mcp_server: {},
  },
};

/**
 * hcl2json gives every block as an array of bodies (`agent: [{...}]`, `tool: {add: [{...}]}`)
 * while object attributes (`parameters = {...}`) stay objects; only names known to be blocks are
 * unwrapped, so attribute values are never touched.
 */
export function normalizeBlocks(
  body: Record<string, unknown>,
  spec: BlockSpec,
  path: string[],
  errors: string[],
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(body)) {
    const single = spec.single?.[key];
    const labelled = spec.labelled?.[key];
    if (single) {
      out[key] = normalizeSingle(value, single, [...path, key], errors);
    } else if (labelled) {
      const here = [...path, key];
      if (isBlockList(value)) {
        errors.push(
          `${formatPath(here)}: a ${key} block needs a name: ${key} "name" { ... }`,
        );
      } else if (isPlainObject(value)) {
        out[key] = Object.fromEntries(
          Object.entries(value).map((
            [label, entry],
          ) => [
            label,
            normalizeSingle(entry, labelled, [...here, label], errors, `${key} "${label}"`),
          ]),
        );
      } else {
        out[key] = value;
      }
    } else {
      out[key] = value;
    }
  }
  return out;
}

function normalizeSingle(
  value: unknown,
  spec: BlockSpec,
  path: string[],
  errors: string[],
  name = formatPath(path),
): unknown {
  let body = value;
  if (isBlockList(value)) {
    if (value.length > 1) {
      errors.push(
        `${formatPath(path)}: block ${name} is given ${value.length} times; give it once`,
      );
    }
    body = value[0];
  }
  return isPlainObject(body) ? normalizeBlocks(body, spec, path, errors) : body;
}

function isBlockList(value: unknown): value is Record<string, unknown>[] {
  return Array.isArray(value) && value.length > 0 && value.every(isPlainObject);
}
