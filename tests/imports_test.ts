/**
 * The layering of src/, computed from the real module graph (`deno info --json` over every file,
 * type-only imports included): no import cycle between top-level src/ entries (folders, and the
 * files directly in src/), nothing of src/http imports an add-on, the HTTP kit is a leaf of
 * src/http, the add-ons reach the store only through the run service, and a folder with a
 * `mod.ts` is entered only through it. Part of `deno task check`.
 */
import assert from "node:assert/strict";
import { type FileEdge, filesUnder, importEdges, ROOT } from "./module_graph.ts";

const SRC = `${ROOT}src/`;

/** The imports between files of src/ (code and type-only imports). */
async function fileEdges(): Promise<FileEdge[]> {
  const files = await filesUnder(SRC, [".ts"]);
  return await importEdges(files.map((f) => SRC + f), SRC);
}

/** The top-level src/ entry a file belongs to: its first folder, or the file itself. */
function topLevel(path: string): string {
  return path.split("/")[0];
}

/** One cycle of a directed graph (as a closed path), or undefined when it has none. */
export function findCycle(graph: Map<string, Set<string>>): string[] | undefined {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, "open");
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === "open") return [...stack.slice(stack.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(node, "done");
    return undefined;
  };
  for (const node of [...graph.keys()].sort()) {
    if (!state.has(node)) {
      const found = visit(node);
      if (found) return found;
    }
  }
  return undefined;
}

const edges = await fileEdges();

/** Example file imports behind a folder edge, for the failure message. */
function behind(from: string, to: string): string {
  return edges.filter((e) => topLevel(e.from) === from && topLevel(e.to) === to)
    .slice(0, 3).map((e) => `${e.from} -> ${e.to}`).join(", ");
}

Deno.test("imports: the cycle finder finds a cycle and accepts a DAG", () => {
  const g = (pairs: [string, string][]) => {
    const graph = new Map<string, Set<string>>();
    for (const [a, b] of pairs) graph.set(a, (graph.get(a) ?? new Set()).add(b));
    return graph;
  };
  assert.deepEqual(findCycle(g([["a", "b"], ["b", "c"], ["c", "a"]])), ["a", "b", "c", "a"]);
  assert.equal(findCycle(g([["a", "b"], ["b", "c"], ["a", "c"]])), undefined);
});

Deno.test("imports: no cycle between top-level src/ folders", () => {
  const graph = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    const [a, b] = [topLevel(from), topLevel(to)];
    if (a !== b) graph.set(a, (graph.get(a) ?? new Set()).add(b));
  }
  // The graph really is the app's: the composition root reaches the HTTP app and the store.
  assert.ok(graph.get("server.ts")?.has("http") && graph.get("server.ts")?.has("store"));
  const cycle = findCycle(graph);
  assert.equal(
    cycle,
    undefined,
    cycle &&
      `import cycle ${cycle.join(" -> ")}: ${
        cycle.slice(1).map((to, i) => behind(cycle[i], to)).join("; ")
      }`,
  );
});

Deno.test("imports: src/http imports no add-on; the kit is a leaf of src/http", () => {
  const bad = edges.filter((e) =>
    (e.from.startsWith("http/") && e.to.startsWith("protocols/")) ||
    (e.from.startsWith("http/kit/") && e.to.startsWith("http/") && !e.to.startsWith("http/kit/"))
  );
  assert.deepEqual(bad.map((e) => `${e.from} -> ${e.to}`), []);
  assert.ok(edges.some((e) => e.from.startsWith("protocols/") && e.to.startsWith("http/kit/")));
});

Deno.test("imports: the add-ons reach the store only through the run service", () => {
  const bad = edges.filter((e) => e.from.startsWith("protocols/") && e.to.startsWith("store/"));
  assert.deepEqual(bad.map((e) => `${e.from} -> ${e.to}`), []);
});

/** Folders of src/ (relative, with a trailing slash) that have a `mod.ts`. */
async function unitFolders(dir = SRC, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) {
      out.push(...await unitFolders(`${dir}${entry.name}/`, `${prefix}${entry.name}/`));
    } else if (entry.name === "mod.ts" && prefix !== "") out.push(prefix);
  }
  return out;
}

Deno.test("imports: a folder with a mod.ts is entered only through its mod.ts", async () => {
  const units = await unitFolders();
  assert.ok(units.includes("store/") && units.includes("http/kit/"), String(units));
  // The innermost folder with a mod.ts that holds a file: the unit an importer must go through.
  const unitOf = (file: string) =>
    units.filter((u) => file.startsWith(u)).sort((a, b) => b.length - a.length)[0];
  const bad = edges.filter(({ from, to }) => {
    const unit = unitOf(to);
    return unit !== undefined && !from.startsWith(unit) && to !== `${unit}mod.ts`;
  });
  assert.deepEqual(bad.map((e) => `${e.from} -> ${e.to}`), []);
});
