/**
 * Sandbox processes of one tool. Every call gets a fresh process of its own. Once the pool is
 * prepared (the server does it at startup), a process that has already loaded the module waits
 * for the next call, and taking it starts its replacement in the background: a call then never
 * waits for a start unless calls come faster than processes start. Unprepared (`agentd check`,
 * a tool used on its own), each call starts its process and nothing outlives the call.
 */
import { type HostSpec, SandboxProcess } from "./host.ts";

/** A tool's sandbox processes, started ahead of the calls once prepared. */
export class ProcessPool {
  readonly #spec: () => HostSpec;
  readonly #size: number;
  #idle: SandboxProcess[] = [];
  /** Taken processes until they have exited (a prepared pool does not wait for that per call). */
  #taken = new Set<SandboxProcess>();
  #warm = false;
  #closed = false;

  /**
   * @param spec how to start a process (called for each start)
   * @param size how many started processes wait for calls once prepared
   */
  constructor(spec: () => HostSpec, size = 1) {
    this.#spec = spec;
    this.#size = size;
  }

  /**
   * A process for one call (ready, still loading, or failed to load); null once closed. Throws
   * what `spec` throws when a process cannot be started at all.
   */
  take(): SandboxProcess | null {
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

  /** Whether calls may return before their process has exited (`close` waits for it). */
  get prepared(): boolean {
    return this.#warm;
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
