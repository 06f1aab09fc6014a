/**
 * A listener whose process ran out of descriptors accepts again once they are free (issue 27).
 * Deno 2.9's `node:http` listener never polls its socket again after an accept failed with EMFILE;
 * the accept watch (src/http/accept_watch.ts) notices and listens again. Here the listener runs
 * alone in a process with a low open-files limit (tests/http/fixtures/descriptor_hog.ts), the
 * test has it open every descriptor left, connects (the accept fails), has it close them, and
 * waits for a new connection to be served.
 */
import assert from "node:assert/strict";
import { eventually, slowTest } from "../_kit/mod.ts";

const FIXTURE = new URL("./fixtures/descriptor_hog.ts", import.meta.url).pathname;

/**
 * The status of `GET /healthz` on a new connection (fetch would reuse a kept-alive one), or
 * `undefined` when no answer came within `ms`.
 */
async function statusWithin(url: string, ms: number): Promise<number | undefined> {
  const { hostname, port } = new URL(url);
  const conn = await Deno.connect({ hostname, port: Number(port) });
  const timer = setTimeout(() => conn.close(), ms);
  try {
    await conn.write(new TextEncoder().encode("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"));
    const buf = new Uint8Array(1024);
    const n = await conn.read(buf);
    if (n === null) return undefined;
    return Number(new TextDecoder().decode(buf.subarray(0, n)).split(" ")[1]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

slowTest({
  name: "a listener out of descriptors accepts again once they are free",
  // The child's pipes outlive single awaits.
  sanitizeResources: false,
  sanitizeOps: false,
}, async () => {
  const child = new Deno.Command("prlimit", {
    args: ["--nofile=256:256", Deno.execPath(), "run", "-A", "--no-prompt", FIXTURE],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    // The update check would open a descriptor of its own at a moment of its choosing.
    env: { DENO_NO_UPDATE_CHECK: "1" },
  }).spawn();
  const stdout = lines(child.stdout);
  const stderr: string[] = [];
  const drained = (async () => {
    for await (const line of lines(child.stderr)) stderr.push(line);
  })();
  const stdin = child.stdin.getWriter();
  const send = (command: string) => stdin.write(new TextEncoder().encode(`${command}\n`));
  try {
    const url = (await stdout.next()).value as string;
    assert.equal(await statusWithin(url, 5_000), 200);

    await send("hog");
    assert.match((await stdout.next()).value as string, /^hogged \d+$/);
    // Its accept fails: no descriptor for the connection. A descriptor the runtime freed just
    // then serves one connection, and the hog takes it back when that one closes.
    await eventually(async () => await statusWithin(url, 1_000) === undefined, {
      timeout: 15_000,
      what: "a connection left unanswered for want of a descriptor",
    });
    await send("free");
    assert.equal((await stdout.next()).value, "freed");

    const freed = performance.now();
    await eventually(async () => await statusWithin(url, 1_000) === 200, {
      timeout: 15_000,
      what: "a new connection served once descriptors are free",
    });
    console.log(`served again ${Math.round(performance.now() - freed)} ms after descriptors freed`);
    assert.ok(stderr.some((l) => l.includes("the listener stopped accepting connections")));
  } finally {
    await stdin.close().catch(() => {});
    try {
      child.kill("SIGKILL");
    } catch { /* already ended */ }
    await child.status;
    await drained;
  }
});

/** The lines of `stream`, as they come. */
async function* lines(stream: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  let buffer = "";
  const decoder = new TextDecoder();
  for await (const chunk of stream) {
    buffer += decoder.decode(chunk, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n")) >= 0) {
      yield buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
    }
  }
}
