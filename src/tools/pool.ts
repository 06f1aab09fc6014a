/**
 * Sandbox processes of one tool. Every call gets a fresh process of its own. Once the pool is
 * prepared (the server does it at startup), a process that has already loaded the module waits
 * for the next call, and taking it starts its replacement in the background: a call then never
 * waits for a start unless calls come faster than processes start. Unprepared (`agentd check`,
 * a tool used on its own), each call starts its process and nothing outlives the call.
 */
import { SandboxProcess } from "./host/process.ts";
import type { HostEnd, HostSpec } from "./host/protocol.ts";
import type { ProcessSlots } from "./slots.ts";
import type { ToolCallContext } from "./types.ts";

/** A tool's sandbox processes, started ahead of the calls once prepared. */
export class ProcessPool {
  readonly #spec: () => HostSpec;
  readonly #size: number;
  readonly #slots: ProcessSlots | undefined;
  #idle: SandboxProcess[] = [];
  /** Taken processes until they have exited (a prepared pool does not wait for that per call). */
  #taken = new Set<SandboxProcess>();
  #warm = false;
  #closed = false;

  /**
   * @param spec how to start a process (called for each start)
   * @param slots the server's bound on processes running calls at once (none: unbounded)
   * @param size how many started processes wait for calls once prepared
   */
  constructor(spec: () => HostSpec, slots?: ProcessSlots, size = 1) {
    this.#spec = spec;
    this.#slots = slots;
    this.#size = size;
  }

  /**
   * Runs one call in a process of its own, once a slot is free (see ./slots.ts): the slot is
   * held until that process has exited. `timeout` bounds the wait for a slot and, from when the
   * process gets the call, the call (`busy` when no slot came in time). Null once the pool is
   * closed. Throws when a process cannot be started at all.
   */
  async call(
    args: Record<string, unknown>,
    ctx: ToolCallContext,
    timeout: number,
  ): Promise<HostEnd | null> {
    const release = this.#slots
      ? await this.#slots.acquire(ctx.signal, timeout, ctx.tenant_id)
      : () => {};
    if (release === "cancelled") return { kind: "cancelled" };
    if (release === "timeout") {
      const message =
        `all ${this.#slots!.max} tool process slots stayed in use for ${timeout} ms ` +
        "(runtime.tools.max_processes); the call did not start";
      return { kind: "busy", message };
    }
    let process: SandboxProcess | null;
    try {
      process = this.#take();
    } catch (err) {
      release();
      throw err;
    }
    if (!process) {
      release();
      return null;
    }
    process.exited.then(release);
    // What the process gets, JavaScript and Python alike.
    const { context, tenant_id, session_id, run_id, tool_call_id } = ctx;
    const request = { args, context, tenant_id, session_id, run_id, tool_call_id };
    return await process.call(request, ctx, timeout, !this.#warm);
  }

  /**
   * A process for one call (ready, still loading, or failed to load); null once closed. Throws
   * what `spec` throws when a process cannot be started at all.
   */
  #take(): SandboxProcess | null {
    if (this.#closed) return null;
    let process: SandboxProcess | undefined;
    // One that died after loading (killed from outside) serves no call; one that failed to load
    // does: the call reports why.
    while ((process = this.#idle.shift()) && !process.usable) process = undefined;
    process ??= new SandboxProcess(this.#spec());
    this.#taken.add(process);
    const taken = process;
    // The replacement starts once this call is over, so the two do not compete for the CPU.
    taken.exited.then(() => {
      this.#taken.delete(taken);
      this.#fill();
    });
    return taken;
  }

  /**
   * Keeps processes started ahead of the calls from now on; resolves once the waiting ones are
   * ready (or failed to load, which the next call reports).
   */
  async prepare(): Promise<void> {
    if (this.#closed) return;
    this.#warm = true;
    this.#fill();
    await Promise.all(this.#idle.map((p) => p.ready));
  }

  /** Stops every waiting process and waits for the taken ones to exit; calls after get none. */
  async close(): Promise<void> {
    this.#closed = true;
    const idle = this.#idle;
    this.#idle = [];
    await Promise.all([...idle.map((p) => p.close()), ...[...this.#taken].map((p) => p.exited)]);
  }

  #fill(): void {
    while (this.#warm && !this.#closed && this.#idle.length < this.#size) {
      let spec: HostSpec;
      try {
        spec = this.#spec();
      } catch {
        return; // the next call starts its own process and reports why it cannot
      }
      this.#idle.push(new SandboxProcess(spec));
    }
  }
}
