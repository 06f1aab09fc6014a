/**
 * The public surfaces of src/ (every `mod.ts`) are documented: `deno doc --lint` over all of them
 * reports nothing — every exported symbol has JSDoc, explicit types, and references only types the
 * surfaces export. Part of `deno task check`.
 *
 * References to types that no surface owns are not reported: types of npm packages (Hono's
 * `Context`, zod's `ZodType`), which Deno 2.9 calls private because the package is not one of the
 * documented roots (denoland/deno#27364; re-exporting them would pull the package's own
 * undocumented internals into the lint), and types of the modules that belong to no folder with a
 * `mod.ts` (`src/api/schemas.ts`, `src/config/`, `src/errors.ts`, `src/log.ts`, `src/runs/`...),
 * which are imported file by file and have no surface to be part of. A reference to a type
 * declared inside a folder with a `mod.ts` must be exported by a surface.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url);
const SRC = new URL("src/", ROOT);

/** Every `mod.ts` under src/, relative to the repository root. */
async function surfaces(dir = SRC, prefix = "src/"): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) {
      out.push(...await surfaces(new URL(`${entry.name}/`, dir), `${prefix}${entry.name}/`));
    } else if (entry.name === "mod.ts") out.push(`${prefix}mod.ts`);
  }
  return out.sort();
}

/** Every line (`<number>|<text>`) of the .ts files in folders of src/ that have a `mod.ts`. */
async function unitLines(dir = SRC, inUnit = false): Promise<Set<string>> {
  const lines = new Set<string>();
  const entries = await Array.fromAsync(Deno.readDir(dir));
  const unit = inUnit || (dir !== SRC && entries.some((e) => e.name === "mod.ts"));
  for (const entry of entries) {
    const url = new URL(entry.isDirectory ? `${entry.name}/` : entry.name, dir);
    if (entry.isDirectory) { for (const l of await unitLines(url, unit)) lines.add(l); }
    else if (unit && entry.name.endsWith(".ts")) {
      const text = (await Deno.readTextFile(url)).split("\n");
      text.forEach((l, i) => lines.add(`${i + 1}|${l.trim()}`));
    }
  }
  return lines;
}

/** One diagnostic of `deno doc --lint`: its rule, message, the line it points at and, for a
 * private type reference, the declaration line (`<number>|<text>`) of the referenced type. */
interface Diagnostic {
  rule: string;
  message: string;
  at: string;
  referenced?: string;
}

function diagnostics(output: string): Diagnostic[] {
  // deno-lint-ignore no-control-regex
  const text = output.replace(/\x1b\[[0-9;]*m/g, "");
  const out: Diagnostic[] = [];
  for (const block of text.split(/\n(?=error\[)/)) {
    const head = /^error\[([a-z-]+)\]: (.*)$/m.exec(block);
    if (!head) continue;
    const at = /-->\s+(\S+)/.exec(block)?.[1] ?? "?";
    const ref = /^\s*(\d+) \| (.*)\n\s*\|\s*- this is the referenced type/m.exec(block);
    out.push({
      rule: head[1],
      message: head[2],
      at: at.replace(new URL(ROOT).pathname, ""),
      referenced: ref ? `${ref[1]}|${ref[2].trim()}` : undefined,
    });
  }
  return out;
}

Deno.test("surfaces: deno doc --lint reports nothing on any mod.ts of src/", async () => {
  const entries = await surfaces();
  assert.ok(entries.length > 10, `found only ${entries}`);
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "--lint", ...entries],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  // A referenced type is owned by a surface when its declaration line is in a unit's file.
  const owned = await unitLines();
  const found = diagnostics(text).filter((d) =>
    !(d.rule === "private-type-ref" && d.referenced && !owned.has(d.referenced))
  );
  assert.deepEqual(found.map((d) => `${d.at} ${d.rule}: ${d.message}`), []);
});
