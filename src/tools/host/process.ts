/**
 * One sandbox process serving one tool call: the server's end of the protocol (protocol.ts), the
 * shared machinery of JavaScript and Python tools. Whatever happens (a crash, a heap limit, a
 * timeout, a cancelled run, a limit crossed, garbage) the call ends with a `HostEnd`, the process
 * (group) killed and reaped; nothing here throws at the caller.
 */
import { LineBuffer, Tail } from "./buffers.ts";
import {
  type HostCallContext,
  type HostEnd,
  type HostSpec,
  parseMessage,
  PROTOCOL_MARK,
} from "./protocol.ts";

const NEWLINE = 0x0a;

/**
 * A started sandbox process: loads the module at once, serves one `call`, then is gone. `ready`
 * resolves when it is ready for a request or has ended while loading.
 */
export class SandboxProcess {
  readonly #spec: HostSpec;
  readonly #child: Deno.ChildProcess | null;
  readonly #output: Tail;
  readonly ready: Promise<void>;
  #readyResolve!: () => void;
  #isReady = false;
  #end: HostEnd | null = null;
  #ended = Promise.withResolvers<HostEnd>();
  #calling: HostCallContext | null = null;
  #emits = 0;
  #emitBytes = 0;
  #loadTimer: ReturnType<typeof setTimeout> | undefined;
  #stdout: ReadableStreamDefaultReader<Uint8Array> | null = null;
  #reaped: Promise<void>;

  constructor(spec: HostSpec) {
    this.#spec = spec;
    this.#output = new Tail(spec.output_tail);
    this.ready = new Promise((r) => this.#readyResolve = r);
    let child: Deno.ChildProcess | null = null;
    try {
      child = new Deno.Command(spec.command, {
        args: spec.args,
        env: spec.env,
        clearEnv: true,
        cwd: spec.cwd,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
        // setsid(): the process leads its own group, so one kill reaches the tool's children.
        detached: spec.group,
      }).spawn();
    } catch (error) {
      this.#finish({ kind: "spawn_failed", error });
    }
    this.#child = child;
    if (!child) {
      this.#reaped = Promise.resolve();
      return;
    }
    this.#loadTimer = setTimeout(
      () => this.#finish({ kind: "timeout", loading: true, output: "" }),
      spec.load_timeout,
    );
    const stderr = this.#pumpStderr(child.stderr);
    const stdout = this.#pumpStdout(child.stdout);
    this.#reaped = (async () => {
      await stdout;
      const status = await child.status;
      this.#finish({
        kind: "exit",
        code: status.code,
        signal: status.signal,
        output: "",
      });
      // A child that left the process group may hold stderr open: do not wait for it long.
      let grace: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([stderr, new Promise((r) => grace = setTimeout(r, 200))]);
      clearTimeout(grace);
      await child.stderr.cancel().catch(() => {});
      await child.stdin.close().catch(() => {});
    })();
  }

  /**
   * Whether a call may take this process: it is loading, ready, or failed to load (the call then
   * reports why); not when it died after loading, while it waited.
   */
  get usable(): boolean {
    return this.#end === null || !this.#isReady;
  }

  /**
   * Sends the request and waits for the outcome, emitting live events through `ctx`; the process
   * is gone afterwards (reaped too, unless `waitForExit` is false and the call returned a result).
   * The timeout counts from now and includes waiting for the module to load.
   */
  async call(
    request: unknown,
    ctx: HostCallContext,
    timeout: number,
    waitForExit = true,
  ): Promise<HostEnd> {
    if (ctx.signal.aborted) {
      this.kill();
      return { kind: "cancelled" };
    }
    this.#calling = ctx;
    const timer = setTimeout(
      () => this.#finish({ kind: "timeout", loading: !this.#isReady, output: "" }),
      timeout,
    );
    const onAbort = () => this.#finish({ kind: "cancelled" });
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    try {
      await this.ready;
      if (this.#end === null && this.#child) {
        const line = new TextEncoder().encode(JSON.stringify(request) + "\n");
        const writer = this.#child.stdin.getWriter();
        // A process that died meanwhile: its exit status tells the story, not EPIPE.
        writer.write(line).catch(() => {});
        writer.releaseLock();
      }
      const end = await this.#ended.promise;
      // A result needs nothing more from the process: it is killed, and reaped in the background
      // when the caller tracks `exited` (a pool), which saves the few ms a process takes to exit.
      if (end.kind !== "result" || waitForExit) await this.#reaped;
      return this.#withOutput(end);
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener("abort", onAbort);
    }
  }

  /** Resolves once the process has exited and been reaped. */
  get exited(): Promise<void> {
    return this.#reaped;
  }

  /** Stops the process (and its group) and reaps it. */
  async close(): Promise<void> {
    this.#finish({ kind: "closed" });
    await this.#reaped;
  }

  /** Stops the process (and its group) without waiting. */
  kill(): void {
    this.#finish({ kind: "closed" });
  }

  #withOutput(end: HostEnd): HostEnd {
    if ("output" in end) return { ...end, output: this.#output.toString() };
    return end;
  }

  #finish(end: HostEnd): void {
    if (this.#end !== null) return;
    this.#end = end;
    clearTimeout(this.#loadTimer);
    this.#killGroup();
    // Stop reading too: a process that escaped the group could keep stdout open forever.
    this.#stdout?.cancel().catch(() => {});
    this.#readyResolve();
    this.#ended.resolve(end);
  }

  #killGroup(): void {
    const child = this.#child;
    if (!child) return;
    if (this.#spec.group) {
      try {
        Deno.kill(-child.pid, "SIGKILL");
        return;
      } catch { /* no group (already gone): kill the process itself */ }
    }
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
  }

  async #pumpStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of stream) this.#output.push(decoder.decode(chunk, { stream: true }));
    } catch { /* cancelled */ }
  }

  async #pumpStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    const { result_bytes, emit_bytes } = this.#spec.limits;
    const maxLine = Math.max(result_bytes, emit_bytes) + 4096;
    const line = new LineBuffer();
    const decoder = new TextDecoder();
    // Output of the tool longer than a protocol line is kept in the tail, not buffered.
    let spilling = false;
    const reader = stream.getReader();
    this.#stdout = reader;
    try {
      while (this.#end === null) {
        const { value, done } = await reader.read();
        if (done) break;
        let start = 0;
        while (start < value.length && this.#end === null) {
          const nl = value.indexOf(NEWLINE, start);
          const piece = value.subarray(start, nl < 0 ? value.length : nl);
          start = nl < 0 ? value.length : nl + 1;
          if (spilling) {
            this.#noise(decoder.decode(piece, { stream: true }) + (nl < 0 ? "" : "\n"));
            if (nl >= 0) spilling = false;
            continue;
          }
          line.push(piece);
          if (line.length > maxLine) {
            if (line.first === PROTOCOL_MARK) {
              this.#finish({
                kind: "limit",
                message: `the tool sent a message of more than ${maxLine} bytes ` +
                  `(limits.result_bytes = ${result_bytes}, limits.emit_bytes = ${emit_bytes})`,
                output: "",
              });
              break;
            }
            this.#noise(decoder.decode(line.take(), { stream: true }));
            spilling = nl < 0;
            continue;
          }
          if (nl >= 0) this.#line(line.take());
        }
      }
      if (this.#end === null && line.length > 0) this.#line(line.take());
    } catch { /* cancelled */ }
    await reader.cancel().catch(() => {});
  }

  #noise(text: string): void {
    if (this.#end !== null) return;
    if (this.#spec.strict && text.trim() !== "") {
      this.#finish({ kind: "protocol", line: text.trimEnd(), output: "" });
      return;
    }
    this.#output.push(text);
  }

  #line(bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    if (bytes[0] !== PROTOCOL_MARK) {
      this.#noise(new TextDecoder().decode(bytes) + "\n");
      return;
    }
    const m = parseMessage(bytes.subarray(1));
    if (m === null) {
      this.#finish({
        kind: "protocol",
        line: new TextDecoder().decode(bytes.subarray(1, 201)),
        output: "",
      });
      return;
    }
    if (!this.#isReady) {
      if (m.type === "ready") {
        this.#isReady = true;
        clearTimeout(this.#loadTimer);
        this.#readyResolve();
      } else if (m.type === "error") {
        this.#finish({
          kind: "error",
          message: m.error,
          stage: m.stage ?? "load",
          permission: m.permission === true,
          output: "",
        });
      } else {
        this.#finish({ kind: "protocol", line: JSON.stringify(m).slice(0, 200), output: "" });
      }
      return;
    }
    const ctx = this.#calling;
    if (!ctx || m.type === "ready") {
      // Nothing may come before the request (a tool writing protocol lines of its own).
      this.#finish({ kind: "protocol", line: JSON.stringify(m).slice(0, 200), output: "" });
      return;
    }
    if (m.type === "emit") {
      const { emits, emit_bytes } = this.#spec.limits;
      this.#emits += 1;
      // The value's bytes: the line less its envelope (`\x1e{"type":"emit","name":"...","value":}`).
      this.#emitBytes += Math.max(0, bytes.length - 40 - m.name.length);
      if (this.#emits > emits || this.#emitBytes > emit_bytes) {
        this.#finish({
          kind: "limit",
          message: this.#emits > emits
            ? `the tool sent more than ${emits} live events (limits.emits)`
            : `the tool's live events exceeded ${emit_bytes} bytes (limits.emit_bytes)`,
          output: "",
        });
        return;
      }
      try {
        ctx.emit(m.name, m.value);
      } catch { /* a failing event sink must not fail the tool */ }
      return;
    }
    if (m.type === "result") {
      if (bytes.length > this.#spec.limits.result_bytes + 64) {
        this.#finish({
          kind: "limit",
          message: `the result is larger than ${this.#spec.limits.result_bytes} bytes ` +
            "(limits.result_bytes)",
          output: "",
        });
        return;
      }
      this.#finish({ kind: "result", value: m.value });
      return;
    }
    this.#finish({
      kind: "error",
      message: m.error,
      stage: m.stage,
      permission: m.permission === true,
      output: "",
    });
  }
}
