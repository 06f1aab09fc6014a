/**
 * The OS sandbox of Python tools: bubblewrap (`bwrap`, Debian package `bubblewrap`). Each call's
 * process gets new PID, IPC, UTS and (unless `net` is granted) network namespaces, a private
 * `/proc` that shows only its own processes, and a file system holding nothing but `/usr` and the
 * system library directories, the Python runtime, the tool's directory (read-only), a fresh
 * `/tmp`, and the paths `permissions.read` / `write` grant. The server's environment, store,
 * manifest and home are simply not there.
 *
 * As root, agentd runs bwrap privileged and the tool as user `nobody` (65534, through `setpriv`),
 * so it has no capabilities and `limits.processes` applies to it (the kernel exempts root); as
 * any other user, bwrap makes an unprivileged user namespace, which the kernel must allow.
 */
import { dirname, resolve, sep } from "node:path";

/** The uid and gid a root server runs sandboxed tools as. */
export const SANDBOX_UID = 65534;

/** Directories of the system every sandbox gets, read-only (symlinks stay symlinks). */
const SYSTEM_DIRS = ["/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/** Files a tool with network access needs to resolve names and check certificates. */
const NET_FILES = [
  "/etc/resolv.conf",
  "/etc/hosts",
  "/etc/nsswitch.conf",
  "/etc/gai.conf",
  "/etc/ssl",
  "/etc/ca-certificates",
  "/etc/pki",
];

/** The first executable called `name` on PATH, or null. */
export function findExecutable(name: string, path = Deno.env.get("PATH") ?? ""): string | null {
  for (const dir of path.split(":")) {
    if (!dir) continue;
    const candidate = `${dir}/${name}`;
    try {
      const info = Deno.statSync(candidate);
      if (info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0) return candidate;
    } catch { /* not here */ }
  }
  return null;
}

/** Whether `path` is `dir` or below it. */
export function within(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/** `path` with its symlinks resolved; null when it does not exist. */
export function realPath(path: string): string | null {
  try {
    return Deno.realPathSync(path);
  } catch {
    return null;
  }
}

/** The given paths as existing real paths, without those inside another one. */
function outermost(paths: string[]): string[] {
  const real = [...new Set(paths.map(realPath).filter((p): p is string => p !== null))].sort();
  return real.filter((p, i) => !real.slice(0, i).some((q) => within(p, q)));
}

/** What one sandbox holds besides the system directories. */
export interface SandboxMounts {
  /** Read-only: the tool's directory, the Python runtime, `permissions.read` paths. */
  read: string[] | true;
  /** Read-write: `permissions.write` paths. */
  write: string[] | true;
  /** Whether the network namespace is the host's. */
  net: boolean;
  /** The working directory inside. */
  cwd: string;
}

/** The programs the sandbox needs on this host, or why it cannot run here. */
export interface SandboxHost {
  bwrap: string;
  /** `setpriv` when the server runs as root (the tool then runs as `nobody`). */
  setpriv: string | null;
}

/** The sandbox's programs, or a sentence saying what is missing. */
export function sandboxHost(): SandboxHost | string {
  const bwrap = findExecutable("bwrap");
  if (!bwrap) {
    return "bubblewrap (bwrap) is not installed; install it (Debian/Ubuntu: apt-get install " +
      "bubblewrap)";
  }
  if (Deno.uid() !== 0) return { bwrap, setpriv: null };
  const setpriv = findExecutable("setpriv");
  if (!setpriv) {
    return "setpriv (util-linux) is not installed; agentd needs it to run sandboxed tools as " +
      "nobody when it runs as root";
  }
  return { bwrap, setpriv };
}

/**
 * The command line (`[program, ...args]`) that runs `command` in a sandbox with `mounts`; the
 * process's environment is the one bwrap is started with.
 */
export function sandboxCommand(
  host: SandboxHost,
  mounts: SandboxMounts,
  command: string[],
): string[] {
  const args = [
    host.bwrap,
    "--die-with-parent",
    "--new-session",
    "--unshare-ipc",
    "--unshare-pid",
    "--unshare-uts",
    "--unshare-cgroup-try",
  ];
  if (!mounts.net) args.push("--unshare-net");
  // Unprivileged bwrap needs a user namespace; a root server drops to nobody with setpriv instead.
  if (!host.setpriv) args.push("--unshare-user");
  else args.push("--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID");
  // Mount points already there; bwrap would make a missing parent directory mode 0700, which
  // nobody cannot enter, so parents are made here, 0755.
  const present: string[] = ["/proc", "/dev"];
  // Whether a directory exists in the sandbox already (the fresh /tmp is empty).
  const covered = (p: string) => p === "/tmp" || present.some((m) => within(p, m));
  const mount = (how: string, path: string) => {
    const parents: string[] = [];
    for (let p = dirname(path); p !== "/" && !covered(p); p = dirname(p)) {
      parents.unshift(p);
    }
    for (const p of parents) {
      args.push("--perms", "0755", "--dir", p);
      present.push(p);
    }
    args.push(how, path, path);
    present.push(path);
  };
  if (mounts.read === true) args.push("--ro-bind", "/", "/");
  if (mounts.write === true) args.push("--bind", "/", "/");
  if (mounts.read === true || mounts.write === true) present.push("/");
  for (const dir of SYSTEM_DIRS) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(dir);
    } catch {
      continue;
    }
    if (info.isSymlink) args.push("--symlink", Deno.readLinkSync(dir), dir);
    else if (info.isDirectory) args.push("--ro-bind", dir, dir);
    present.push(dir);
  }
  // World-writable with the sticky bit, as /tmp is: as root, bwrap makes the tmpfs root's, 0755,
  // and the tool, which runs as nobody, could not write its own /tmp (its HOME and TMPDIR).
  args.push("--proc", "/proc", "--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp");
  if (mounts.net && mounts.read !== true) {
    for (const file of NET_FILES) args.push("--ro-bind-try", file, file);
  }
  if (mounts.read !== true) {
    for (const path of outermost(mounts.read)) {
      if (!present.some((m) => within(path, m))) mount("--ro-bind", path);
    }
  }
  if (mounts.write !== true) {
    for (const path of outermost(mounts.write)) mount("--bind", path);
  }
  if (host.setpriv && !covered(dirname(host.setpriv))) {
    mount("--ro-bind", host.setpriv);
  }
  args.push("--chdir", mounts.cwd, "--");
  if (host.setpriv) {
    args.push(
      host.setpriv,
      `--reuid=${SANDBOX_UID}`,
      `--regid=${SANDBOX_UID}`,
      "--clear-groups",
      "--no-new-privs",
      "--",
    );
  }
  return [...args, ...command];
}

/**
 * Starts an empty sandbox once: null when it works on this host, else a sentence saying why not
 * (bwrap missing, user namespaces not allowed in this container...).
 */
export async function probeSandbox(): Promise<string | null> {
  const host = sandboxHost();
  if (typeof host === "string") return host;
  const [program, ...args] = sandboxCommand(
    host,
    { read: [], write: [], net: false, cwd: "/" },
    ["/bin/sh", "-c", "exit 0"],
  );
  try {
    const out = await new Deno.Command(program, {
      args,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
      clearEnv: true,
      env: { PATH: "/usr/bin:/bin" },
      signal: AbortSignal.timeout(10_000),
    }).output();
    if (out.success) return null;
    const why = new TextDecoder().decode(out.stderr).trim().split("\n").pop() ?? "";
    return `bubblewrap cannot create a sandbox here (${why || `exit code ${out.code}`}); in a ` +
      "container, allow user namespaces (e.g. docker run --security-opt seccomp=unconfined " +
      "--security-opt apparmor=unconfined)";
  } catch (err) {
    return `bubblewrap could not be started: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** The directory of a file, by its real path when it exists. */
export function realDir(file: string): string {
  return dirname(realPath(file) ?? resolve(file));
}
