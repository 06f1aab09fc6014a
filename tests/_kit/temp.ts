/** A temporary directory for a test, removed (with everything in it) when the scope ends. */
import { join } from "node:path";

/** A temp directory: `await using dir = await tempDir()`. */
export interface TempDir extends AsyncDisposable {
  /** Its absolute path. */
  path: string;
  /** A path inside it. */
  join(...parts: string[]): string;
  /** Writes text files (relative names; their directories are created). */
  write(files: Record<string, string>): Promise<void>;
}

/** Makes a temp directory. */
export async function tempDir(prefix = "agentd_test_"): Promise<TempDir> {
  const path = await Deno.makeTempDir({ prefix });
  const inside = (...parts: string[]) => join(path, ...parts);
  return {
    path,
    join: inside,
    async write(files) {
      for (const [name, text] of Object.entries(files)) {
        const file = inside(name);
        await Deno.mkdir(join(file, ".."), { recursive: true });
        await Deno.writeTextFile(file, text);
      }
    },
    [Symbol.asyncDispose]: () => Deno.remove(path, { recursive: true }).catch(() => {}),
  };
}
