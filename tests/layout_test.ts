/**
 * The layout rules a reader relies on to find things, checked on the real files (part of `deno
 * task check`, beside imports_test.ts):
 * - **size**: a file of src/ over 400 lines says why on its first line
 *   (`// Over 400 lines: <reason>.`, `#` in Python);
 * - **tests**: every module of src/ has its tests where tests/_kit/README.md "Where a module's tests
 *   are" says: `tests/<same path>_test.ts`, or the table's row naming it. A row names only test
 *   files and folders that exist and reach the module through their imports, and every module it
 *   names exists; a row without tests is only for a module with no code of its own (types, or
 *   re-exports).
 */
import assert from "node:assert/strict";
import { pathToFileURL } from "node:url";
import { filesUnder, importEdges, ROOT } from "./module_graph.ts";

const SRC = `${ROOT}src/`;
const TESTS = `${ROOT}tests/`;
const README = `${TESTS}_kit/README.md`;

/** The size over which a file needs a reason. */
const MAX_LINES = 400;

/** The modules the rules are about: src/'s code, without the playground's browser files. */
async function modules(): Promise<string[]> {
  return (await filesUnder(SRC, [".ts", ".py"])).filter((f) => !f.includes("/static/"));
}

Deno.test("size: a src file over 400 lines says why on its first line", async () => {
  const unexplained: string[] = [];
  for (const file of await filesUnder(SRC, [".ts", ".js", ".py"])) {
    const lines = (await Deno.readTextFile(SRC + file)).split("\n");
    if (lines.at(-1) === "") lines.pop();
    if (lines.length <= MAX_LINES) continue;
    if (!/^(\/\/|#) Over 400 lines: \S.*\.$/.test(lines[0])) {
      unexplained.push(`src/${file} (${lines.length} lines)`);
    }
  }
  assert.deepEqual(
    unexplained,
    [],
    "split these files, or start them with `// Over 400 lines: <reason>.`",
  );
});

/** One row of the README's table: modules (paths or `dir/*` globs, under src/) and their tests. */
interface Row {
  line: number;
  modules: string[];
  tests: string[];
}

/** The rows of the README's "Where a module's tests are" table. */
async function tableRows(): Promise<Row[]> {
  const text = await Deno.readTextFile(README);
  const start = text.indexOf("## Where a module's tests are");
  assert.ok(start >= 0, 'tests/_kit/README.md has a section "Where a module\'s tests are"');
  const rows: Row[] = [];
  const lines = text.slice(start).split("\n");
  const firstLine = text.slice(0, start).split("\n").length;
  let body = false;
  for (const [i, line] of lines.entries()) {
    if (i > 0 && line.startsWith("## ")) break;
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length !== 4) continue;
    // The rows after the header's separator.
    if (!body) {
      body = cells[1].startsWith("---");
      continue;
    }
    const paths = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
    rows.push({ line: firstLine + i, modules: paths(cells[1]), tests: paths(cells[2]) });
  }
  assert.ok(rows.length > 0, "the table has rows");
  return rows;
}

/** The modules a row's module pattern names: a path, or `dir/*` for every module directly in it. */
function expand(pattern: string, all: string[]): string[] {
  if (!pattern.endsWith("/*")) return all.includes(pattern) ? [pattern] : [];
  const dir = pattern.slice(0, -1);
  return all.filter((m) => m.startsWith(dir) && !m.slice(dir.length).includes("/"));
}

/** The import graph of tests/ and src/, file to files, as paths relative to the repository. */
async function importGraph(): Promise<Map<string, string[]>> {
  const roots = await filesUnder(TESTS, [".ts"]);
  const graph = new Map<string, string[]>();
  for (const { from, to } of await importEdges(roots.map((f) => TESTS + f), ROOT)) {
    graph.set(from, [...graph.get(from) ?? [], to]);
  }
  return graph;
}

/** Every file `from` reaches through its imports, itself included. */
function reach(graph: Map<string, string[]>, from: string): Set<string> {
  const seen = new Set([from]);
  const queue = [from];
  while (queue.length > 0) {
    for (const next of graph.get(queue.pop()!) ?? []) {
      if (!seen.has(next)) {
        seen.add(next);
        queue.push(next);
      }
    }
  }
  return seen;
}

/** Whether `module` (under src/) has code of its own: not only types, not only re-exports. */
async function hasCode(module: string): Promise<boolean> {
  const text = (await Deno.readTextFile(SRC + module))
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/^\s*\/\/.*$/gm, "");
  const statements = text.replace(
    /(import|export)\s+(type\s+)?(\*(\s+as\s+\w+)?|\{[^}]*\}|\w+)\s+from\s+"[^"]+";/g,
    "",
  );
  if (statements.trim() === "") return false;
  const namespace = await import(pathToFileURL(SRC + module).href);
  return Object.keys(namespace).length > 0;
}

Deno.test("tests: every module of src/ has its tests where the test kit's README says", async () => {
  const all = await modules();
  const rows = await tableRows();
  const graph = await importGraph();
  const testFiles = await filesUnder(TESTS, [".ts"]);
  const problems: string[] = [];

  const mapped = new Set<string>();
  for (const row of rows) {
    const where = `tests/_kit/README.md:${row.line}`;
    const named = row.modules.flatMap((pattern) => {
      const found = expand(pattern, all);
      if (found.length === 0) problems.push(`${where}: no module src/${pattern}`);
      return found;
    });
    const tests = row.tests.flatMap((path) => {
      const found = path.endsWith("/")
        ? testFiles.filter((f) => f.startsWith(path) && f.endsWith("_test.ts"))
        : testFiles.filter((f) => f === path && f.endsWith("_test.ts"));
      if (found.length === 0) problems.push(`${where}: no test file or folder tests/${path}`);
      return found;
    });
    for (const module of named) {
      mapped.add(module);
      if (row.tests.length === 0) {
        if (await hasCode(module)) problems.push(`${where}: src/${module} has code but no tests`);
        continue;
      }
      const reached = tests.some((t) => reach(graph, `tests/${t}`).has(`src/${module}`));
      if (tests.length > 0 && !reached) {
        problems.push(`${where}: none of its tests imports src/${module}`);
      }
    }
  }

  for (const module of all) {
    const own = module.replace(/\.(ts|py)$/, "_test.ts");
    if (testFiles.includes(own)) {
      if (module.endsWith(".ts") && !reach(graph, `tests/${own}`).has(`src/${module}`)) {
        problems.push(`tests/${own} does not import src/${module}`);
      }
      continue;
    }
    if (!mapped.has(module)) {
      problems.push(`src/${module}: no tests/${own} and no row in tests/_kit/README.md`);
    }
  }
  assert.deepEqual(problems, []);
});
