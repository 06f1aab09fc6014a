/**
 * Path resolution after validation: settles the storage kind (SQLite path or PostgreSQL URL) and
 * makes the manifest's file paths absolute (tool modules, `mcp_server` programs and directories).
 */
import { isAbsolute, resolve } from "node:path";
import { maskUrl } from "./mask.ts";
import type { Manifest } from "./schema.ts";

/** The SQLite file used when the manifest names no storage, relative to the working directory. */
export const DEFAULT_SQLITE_PATH = "./.agentd/agentd.db";

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i;
// At least two characters before the colon, so a Windows drive (`C:`) is not taken for a scheme.
const URL_SCHEME = /^[A-Za-z][A-Za-z0-9+.-]+:/;

/** Settles the storage kind and makes file paths absolute (see docs/configuration.md). */
export function resolvePaths(
  manifest: Manifest,
  baseDir: string,
  fromEnv: Set<string>,
  errors: string[],
): Manifest {
  const storage = { ...manifest.runtime.storage };
  const url = storage.url?.trim() || undefined;
  if (url) {
    if (!POSTGRES_URL.test(url)) {
      errors.push(
        `runtime.storage.url: expected a postgres:// or postgresql:// URL, got ${
          JSON.stringify(maskUrl(url))
        } (SQLite takes a path instead)`,
      );
    } else if (storage.kind === "sqlite") {
      errors.push(
        `runtime.storage.kind: "sqlite" conflicts with the PostgreSQL url; remove one of them`,
      );
    }
    storage.kind = "postgres";
    storage.url = url;
    // The URL wins (it typically comes from AGENT__STORAGE__URL over a development manifest).
    delete storage.path;
  } else {
    if (storage.kind === "postgres") {
      errors.push(
        `runtime.storage.url: required when kind = "postgres" (a postgres:// URL, or AGENT__STORAGE__URL)`,
      );
    }
    delete storage.url;
    storage.kind = "sqlite";
    const path = storage.path?.trim() || undefined;
    if (path === undefined) storage.path = resolve(Deno.cwd(), DEFAULT_SQLITE_PATH);
    else if (path === ":memory:") storage.path = path;
    // A path from AGENT__STORAGE__PATH was typed relative to the shell, not to the manifest.
    else storage.path = resolve(fromEnv.has("runtime.storage.path") ? Deno.cwd() : baseDir, path);
  }

  pubsubProblems(manifest.runtime.pubsub, errors);

  const tool = Object.fromEntries(
    Object.entries(manifest.tool).map(([name, t]) => [
      name,
      {
        ...t,
        module: isAbsolute(t.module) || URL_SCHEME.test(t.module)
          ? t.module
          : resolve(baseDir, t.module),
      },
    ]),
  );
  const mcp_server = Object.fromEntries(
    Object.entries(manifest.mcp_server).map(([name, server]) => {
      if (server.command === undefined) return [name, server];
      // A program named by a relative path was written next to the manifest; a bare name is
      // looked up on PATH.
      const [program, ...args] = server.command;
      const relative = program.startsWith("./") || program.startsWith("../");
      return [name, {
        ...server,
        command: [relative ? resolve(baseDir, program) : program, ...args],
        cwd: resolve(baseDir, server.cwd ?? "."),
      }];
    }),
  );
  return { ...manifest, tool, mcp_server, runtime: { ...manifest.runtime, storage } };
}

/**
 * What `createPubSub` would refuse at `serve`, said by `check` too: `redis` needs a URL, of a
 * scheme it speaks, and an Upstash REST URL a token.
 */
function pubsubProblems(pubsub: Manifest["runtime"]["pubsub"], errors: string[]): void {
  if (pubsub.kind !== "redis") return;
  const url = pubsub.url?.trim();
  if (!url) {
    errors.push(
      `runtime.pubsub.url: required when kind = "redis" (redis://host:6379, rediss://host:6380, ` +
        `or an Upstash REST https:// URL with a token; or AGENT__PUBSUB__URL)`,
    );
    return;
  }
  let scheme: string;
  try {
    scheme = new URL(url).protocol;
  } catch {
    errors.push(`runtime.pubsub.url: not a valid URL: ${JSON.stringify(maskUrl(url))}`);
    return;
  }
  if (!["redis:", "rediss:", "https:", "http:"].includes(scheme)) {
    errors.push(
      `runtime.pubsub.url: unsupported scheme '${scheme}' (use redis://, rediss:// or https://)`,
    );
  } else if ((scheme === "https:" || scheme === "http:") && !pubsub.token) {
    errors.push(
      `runtime.pubsub.token: required with an Upstash REST url (https://); or AGENT__PUBSUB__TOKEN`,
    );
  }
}
