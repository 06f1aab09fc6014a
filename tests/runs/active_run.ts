/**
 * A run as the run service holds it while executing (`ActiveRun`), for the tests of the service's
 * parts (delivery, outcome).
 */
import type { ActiveRun } from "../../src/runs/active.ts";
import { uniqueName } from "../_kit/mod.ts";

/** A fresh active run of tenant `t1`, session `s1` (a unique run id unless `extra` gives one). */
export function activeRun(extra: Partial<ActiveRun> = {}): ActiveRun {
  return {
    tenant: "t1",
    run_id: uniqueName("run"),
    session_id: "s1",
    attempt: 1,
    leaseAt: performance.now(),
    controller: new AbortController(),
    done: Promise.resolve(),
    seq: 0,
    timestamp: 0,
    recorded: Promise.withResolvers<void>(),
    last: null,
    started: performance.now(),
    steered: false,
    ...extra,
  };
}
