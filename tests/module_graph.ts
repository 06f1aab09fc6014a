/**
 * The repository's files and module graph for the whole-program checks (imports_test.ts,
 * layout_test.ts): files listed from disk, imports as Deno resolves them (`deno info --json` over
 * an entry importing every root, code and type-only imports alike).
 */
import assert from "node:assert/strict";
import { relative } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/** The repository's root folder, with a trailing slash. */
export const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Every file under `dir` whose name ends with one of `extensions`, relative to `base`. */
export async function filesUnder(
  dir: string,
  extensions: string[],
  base = dir,
): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const path = `${dir}${entry.name}`;
    if (entry.isDirectory) out.push(...await filesUnder(`${path}/`, extensions, base));
    else if (extensions.some((e) => entry.name.endsWith(e))) out.push(relative(base, path));
  }
  return out.sort();
}

/** One import between two files under the graph's base (paths relative to it). */
export interface FileEdge {
  from: string;
  to: string;
}

/**
 * The imports among the files under `base` reachable from `roots` (absolute paths), as Deno
 * resolves them; each edge once.
 */
export async function importEdges(roots: string[], base: string): Promise<FileEdge[]> {
  const dir = await Deno.makeTempDir({ prefix: "agentd_graph_" });
  try {
    const entry = `${dir}/entry.ts`;
    await Deno.writeTextFile(
      entry,
      roots.map((f) => `import "${pathToFileURL(f).href}";`).join("\n") + "\n",
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--config", `${ROOT}deno.json`, entry],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: {
        specifier: string;
        dependencies?: { code?: { specifier?: string }; type?: { specifier?: string } }[];
      }[];
    };
    const baseUrl = pathToFileURL(base).href;
    const local = (url: string | undefined) =>
      url?.startsWith(baseUrl) ? decodeURIComponent(url.slice(baseUrl.length)) : undefined;
    const edges: FileEdge[] = [];
    for (const module of graph.modules) {
      const from = local(module.specifier);
      if (!from) continue;
      for (const dep of module.dependencies ?? []) {
        for (const to of new Set([local(dep.code?.specifier), local(dep.type?.specifier)])) {
          if (to) edges.push({ from, to });
        }
      }
    }
    return edges;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
