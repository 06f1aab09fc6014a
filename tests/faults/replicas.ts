/**
 * The two replicas of a fault test, `a` and `b` (`main.ts serve` processes): started by the
 * test's own `start`, restarted after a fault, and both stopped when the scope ends (`stop` sends
 * SIGCONT first, so a paused one stops too).
 */
import type { ServerProcess } from "../_kit/mod.ts";

/** Which replica. */
export type ReplicaId = "a" | "b";

/** Two replicas; `a` and `b` are the processes running now. */
export interface Replicas extends AsyncDisposable {
  a: ServerProcess;
  b: ServerProcess;
  /** The base URL of replica `id` as it runs now. */
  url(id: ReplicaId): string;
  /** Stops replica `id` (what is left of it after a fault), then starts it again. */
  restart(id: ReplicaId): Promise<void>;
}

/** Starts replicas `a` and `b` with `start`. */
export async function startReplicas(
  start: (id: ReplicaId) => Promise<ServerProcess>,
): Promise<Replicas> {
  const replicas: Replicas = {
    a: await start("a"),
    b: await start("b"),
    url: (id) => replicas[id].url,
    async restart(id) {
      await replicas[id].stop();
      replicas[id] = await start(id);
    },
    async [Symbol.asyncDispose]() {
      await Promise.all([replicas.a.stop(), replicas.b.stop()]);
    },
  };
  return replicas;
}
