/**
 * PostgreSQL and Redis instances of the fault suite's own, on free loopback ports, in temp
 * directories: started, stopped, crashed, paused and restarted by their process ids, never the
 * shared services of the machine. PostgreSQL runs as the `postgres` user when the tests run as
 * root (it refuses root), through `setpriv`, which execs it under the same pid.
 */
import postgres from "postgres";
import { eventually, skipNotice } from "../_kit/mod.ts";

/** A database server the suite owns. */
export interface PgInstance extends AsyncDisposable {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`. */
  url: string;
  port: number;
  /**
   * Starts the server again on the same data and port (no-op while it runs); resolves once it
   * accepts queries.
   */
  start(): Promise<void>;
  /** Fast shutdown (SIGINT): open transactions roll back, clients are disconnected. */
  stop(): Promise<void>;
  /** Immediate shutdown (SIGQUIT), as a crash: no checkpoint, recovery at the next start. */
  crash(): Promise<void>;
  /** SIGSTOP to every process of the server: connections stay open and nothing answers. */
  pause(): void;
  /** SIGCONT to every process paused. */
  resume(): void;
}

/** A Redis server the suite owns. */
export interface RedisInstance extends AsyncDisposable {
  /** `redis://127.0.0.1:<port>`. */
  url: string;
  /** Starts it again on the same port (no-op while it runs); resolves once it answers. */
  start(): Promise<void>;
  /** SIGKILL: every connection drops at once. */
  kill(): Promise<void>;
}

/** The newest PostgreSQL server binaries of the machine, or undefined. */
export function postgresBin(): string | undefined {
  try {
    const versions = [...Deno.readDirSync("/usr/lib/postgresql")].map((e) => e.name)
      .filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = `/usr/lib/postgresql/${v}/bin`;
      if (exists(`${bin}/postgres`) && exists(`${bin}/initdb`)) return bin;
    }
  } catch { /* no PostgreSQL here */ }
  return undefined;
}

/** Whether `redis-server` can be found on the PATH. */
export function redisAvailable(): boolean {
  return which("redis-server") !== undefined;
}

/**
 * Whether this machine has what a fault test starts: PostgreSQL binaries, and `redis-server`
 * unless `redis` is false. When not, says once that `suite` is skipped and why.
 */
export function faultServices(suite: string, { redis = true } = {}): boolean {
  const ok = postgresBin() !== undefined && (!redis || redisAvailable());
  if (!ok) {
    skipNotice(suite, redis ? "PostgreSQL binaries and redis-server" : "PostgreSQL binaries");
  }
  return ok;
}

/** A port that was free a moment ago. */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/**
 * Initialises a cluster in a temp directory and starts it, with `settings` (server parameters,
 * `-c name=value`) on top of the suite's own.
 */
export async function startPostgres(settings: Record<string, string> = {}): Promise<PgInstance> {
  const bin = postgresBin();
  if (!bin) throw new Error("no PostgreSQL binaries under /usr/lib/postgresql");
  const dir = await Deno.makeTempDir({ prefix: "agentd_fault_pg_" });
  const data = `${dir}/data`;
  // PostgreSQL refuses to run as root: then it runs as the `postgres` user, owning the directory.
  const asUser = Deno.uid() === 0 ? postgresUser() : undefined;
  if (asUser) await Deno.chown(dir, asUser.uid, asUser.gid);
  const run = (cmd: string, args: string[]) =>
    new Deno.Command(asUser ? "setpriv" : cmd, {
      args: asUser
        ? [`--reuid=${asUser.uid}`, `--regid=${asUser.gid}`, "--clear-groups", "--", cmd, ...args]
        : args,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    });
  const init = await run(`${bin}/initdb`, [
    "-D",
    data,
    "-A",
    "trust",
    "-U",
    "postgres",
    "-E",
    "UTF8",
    "--locale=C",
    "--no-sync",
    "--no-instructions",
  ]).output();
  if (!init.success) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new Error(`initdb failed: ${new TextDecoder().decode(init.stderr)}`);
  }
  const port = freePort();
  let child: Deno.ChildProcess | undefined;
  const paused: number[] = [];

  const start = async () => {
    if (child) return;
    child = run(`${bin}/postgres`, [
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      dir,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "full_page_writes=off",
      "-c",
      "max_connections=200",
      "-c",
      "shared_buffers=16MB",
      ...Object.entries(settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
    ]).spawn();
    // Drained so the server never blocks on a full pipe; kept for a failure message.
    const output: string[] = [];
    (async () => {
      for await (const chunk of child!.stderr) output.push(new TextDecoder().decode(chunk));
    })().catch(() => {});
    await eventually(async () => {
      if (await exited(child!)) throw new Error(`postgres exited:\n${output.join("")}`);
      const ready = await new Deno.Command(`${bin}/pg_isready`, {
        args: ["-q", "-h", "127.0.0.1", "-p", String(port)],
      }).output();
      return ready.success;
    }, { timeout: 30_000, interval: 50, what: "PostgreSQL to accept connections" });
  };
  const signal = async (sig: Deno.Signal) => {
    const c = child;
    if (!c) return;
    try {
      c.kill(sig);
    } catch { /* gone */ }
    await c.status;
    child = undefined;
  };
  await start();
  const instance: PgInstance = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    start,
    stop: () => signal("SIGINT"),
    crash: () => signal("SIGQUIT"),
    pause() {
      if (!child) return;
      const pids = [child.pid, ...childrenOf(child.pid)];
      for (const pid of pids) {
        Deno.kill(pid, "SIGSTOP");
        paused.push(pid);
      }
    },
    resume() {
      for (const pid of paused.splice(0)) {
        try {
          Deno.kill(pid, "SIGCONT");
        } catch { /* gone */ }
      }
    },
    async [Symbol.asyncDispose]() {
      instance.resume();
      await signal("SIGQUIT");
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
  return instance;
}

/** Starts a Redis server without persistence on a free port. */
export async function startRedis(): Promise<RedisInstance> {
  const port = freePort();
  let child: Deno.ChildProcess | undefined;
  const start = async () => {
    if (child) return;
    child = new Deno.Command("redis-server", {
      args: [
        "--port",
        String(port),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
        "--appendonly",
        "no",
        "--protected-mode",
        "no",
      ],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    await eventually(async () => {
      if (await exited(child!)) throw new Error("redis-server exited");
      try {
        const conn = await Deno.connect({ hostname: "127.0.0.1", port });
        try {
          await conn.write(new TextEncoder().encode("PING\r\n"));
          const buf = new Uint8Array(16);
          const n = await conn.read(buf);
          return n !== null && new TextDecoder().decode(buf.subarray(0, n)).startsWith("+PONG");
        } finally {
          conn.close();
        }
      } catch {
        return false;
      }
    }, { timeout: 15_000, interval: 50, what: "Redis to answer" });
  };
  const kill = async () => {
    const c = child;
    if (!c) return;
    try {
      c.kill("SIGKILL");
    } catch { /* gone */ }
    await c.status;
    child = undefined;
  };
  await start();
  return { url: `redis://127.0.0.1:${port}`, start, kill, [Symbol.asyncDispose]: kill };
}

/** Whether the child has exited (without waiting for it). */
async function exited(child: Deno.ChildProcess): Promise<boolean> {
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), 0));
  return await Promise.race([child.status.then(() => true), timeout]);
}

/** The pids whose parent is `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      // The command may hold spaces and parentheses: the fields after its last ')'.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry.name));
    } catch { /* gone meanwhile */ }
  }
  return out;
}

function postgresUser(): { uid: number; gid: number } {
  const line = Deno.readTextFileSync("/etc/passwd").split("\n")
    .find((l) => l.startsWith("postgres:"));
  if (!line) throw new Error("running as root, but there is no postgres user to run PostgreSQL as");
  const [, , uid, gid] = line.split(":");
  return { uid: Number(uid), gid: Number(gid) };
}

function exists(path: string): boolean {
  try {
    Deno.statSync(path);
    return true;
  } catch {
    return false;
  }
}

function which(cmd: string): string | undefined {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && exists(`${dir}/${cmd}`)) return `${dir}/${cmd}`;
  }
  return undefined;
}

/** A postgres.js pool on `url`, ended when the scope ends. */
export function connect(url: string): postgres.Sql & AsyncDisposable {
  const sql = postgres(url, { onnotice: () => {} });
  return Object.assign(sql, { [Symbol.asyncDispose]: () => sql.end({ timeout: 1 }) });
}
