/** What the benchmarks share to run a server process: spawn it, find its URL, read its RSS. */

const root = new URL("..", import.meta.url).pathname;

/** A spawned server process and the URL it listens on. */
export interface Proc {
  url: string;
  pid: number;
  child: Deno.ChildProcess;
  /** Kills it (SIGKILL) and waits for it to end. */
  stop(): Promise<void>;
}

/**
 * Spawns `deno <args>` in the repository's root and waits (at most `timeoutMs`) for a stdout or
 * stderr line that says where it listens: `listening on http…` or a JSON log line's `"url"`.
 */
export async function spawnServer(
  args: string[],
  env: Record<string, string> = {},
  timeoutMs = 30_000,
): Promise<Proc> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: root,
    env,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const found = Promise.withResolvers<string>();
  const watch = async (stream: ReadableStream<Uint8Array<ArrayBuffer>>) => {
    let buffer = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) {
        const match = /listening on (http\S+)/.exec(line) ?? /"url":"(http[^"]+)"/.exec(line);
        if (match) found.resolve(match[1]);
      }
    }
  };
  void watch(child.stdout);
  void watch(child.stderr);
  const timer = setTimeout(
    () => found.reject(new Error(`no URL from deno ${args.join(" ")}`)),
    timeoutMs,
  );
  const url = await found.promise.finally(() => clearTimeout(timer));
  return {
    url,
    pid: child.pid,
    child,
    async stop() {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      await child.status;
    },
  };
}

/** A loopback port free now (the OS picks it; it is closed again at once). */
export function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** A process's resident set size in bytes (Linux). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024;
}
