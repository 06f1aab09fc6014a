/**
 * The bubblewrap command line of a Python tool's sandbox, as built for a host with and without
 * root (the sandbox at work: isolation_test.ts and python_tool_test.ts).
 */
import assert from "node:assert/strict";
import { findExecutable, SANDBOX_UID, sandboxCommand } from "../../src/tools/sandbox.ts";
import { tempDir } from "../_kit/mod.ts";

/** The values that follow each occurrence of `flag`. */
function after(args: string[], flag: string, count = 1): string[][] {
  return args.flatMap((a, i) => a === flag ? [args.slice(i + 1, i + 1 + count)] : []);
}

Deno.test("sandbox: an unprivileged sandbox gets its own user, network and mounts", async () => {
  await using dir = await tempDir("agentd_sandbox_");
  await dir.write({ "tool/t.py": "", "tool/sub/x": "", "data/f": "" });
  const tool = await Deno.realPath(dir.join("tool"));
  const data = await Deno.realPath(dir.join("data"));
  const args = sandboxCommand(
    { bwrap: "/usr/bin/bwrap", setpriv: null },
    { read: [tool, `${tool}/sub`, "/does/not/exist"], write: [data], net: false, cwd: tool },
    ["python3", "-c", "pass"],
  );
  assert.equal(args[0], "/usr/bin/bwrap");
  for (const flag of ["--die-with-parent", "--new-session", "--unshare-user", "--unshare-net"]) {
    assert.ok(args.includes(flag), flag);
  }
  // Only the outermost of the granted paths that exist, read-only; writes read-write.
  assert.deepEqual(after(args, "--ro-bind", 2).filter(([p]) => p.startsWith(dir.path)), [[
    tool,
    tool,
  ]]);
  assert.deepEqual(after(args, "--bind", 2), [[data, data]]);
  assert.deepEqual(after(args, "--tmpfs"), [["/tmp"]]);
  assert.deepEqual(args.slice(-6), ["--chdir", tool, "--", "python3", "-c", "pass"]);
  assert.ok(!args.some((a) => a.startsWith("--reuid")));
});

Deno.test("sandbox: as root, the tool runs as nobody through setpriv, with the host's network", () => {
  const args = sandboxCommand(
    { bwrap: "/usr/bin/bwrap", setpriv: "/usr/bin/setpriv" },
    { read: true, write: [], net: true, cwd: "/" },
    ["python3"],
  );
  assert.ok(!args.includes("--unshare-user") && !args.includes("--unshare-net"));
  assert.deepEqual(after(args, "--cap-add"), [["CAP_SETUID"], ["CAP_SETGID"]]);
  assert.deepEqual(after(args, "--ro-bind", 2)[0], ["/", "/"], "read = true: the whole tree");
  const tail = args.slice(args.indexOf("--chdir"));
  assert.deepEqual(tail, [
    "--chdir",
    "/",
    "--",
    "/usr/bin/setpriv",
    `--reuid=${SANDBOX_UID}`,
    `--regid=${SANDBOX_UID}`,
    "--clear-groups",
    "--no-new-privs",
    "--",
    "python3",
  ]);
});

Deno.test("sandbox: programs are found on PATH when executable", async () => {
  await using dir = await tempDir("agentd_path_");
  await dir.write({ "a/tool": "", "b/tool": "" });
  await Deno.chmod(dir.join("b/tool"), 0o755);
  assert.equal(findExecutable("tool", `${dir.join("a")}:${dir.join("b")}`), dir.join("b/tool"));
  assert.equal(findExecutable("tool", dir.join("a")), null);
  assert.equal(findExecutable("tool", ""), null);
});
