/**
 * The event-loop stall a server shows while a test does something to it: `/healthz` asked again
 * and again on one kept-alive connection, the longest wait kept. Stalls are reported (printed,
 * bench/README.md), not asserted: a shared machine makes any duration flaky.
 */

/** A running probe: `stop()` ends it and gives the longest `/healthz` wait in milliseconds. */
export interface HealthProbe {
  stop(): Promise<{ longestMs: number; requests: number }>;
}

/** Starts probing `${url}/healthz` every `intervalMs` until `stop()`. */
export function probeHealth(url: string, intervalMs = 20): HealthProbe {
  let running = true;
  let longest = 0;
  let requests = 0;
  const loop = (async () => {
    while (running) {
      const started = performance.now();
      try {
        const res = await fetch(`${url}/healthz`);
        await res.body?.cancel();
      } catch { /* a refused probe still measured its wait */ }
      longest = Math.max(longest, performance.now() - started);
      requests++;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { longestMs: Math.round(longest), requests };
    },
  };
}
