/**
 * The run service's refusals (runs/errors.ts) are domain errors, and the HTTP edge answers each
 * kind with the status, code and message of docs/errors.md.
 */
import assert from "node:assert/strict";
import { errors } from "../../src/errors.ts";
import { apiErrorOf } from "../../src/http/kit/mod.ts";
import { RunServiceError, runServiceErrors } from "../../src/runs/errors.ts";

Deno.test("run service errors: each kind answers as its API error", () => {
  const cases = [
    [runServiceErrors.shuttingDown(), errors.shuttingDown()],
    [runServiceErrors.sessionBusy("s1"), errors.sessionBusy("s1")],
    [runServiceErrors.runNotFound("r1"), errors.runNotFound("r1")],
    [runServiceErrors.runNotRunning("r1", "completed"), errors.runNotRunning("r1", "completed")],
    [runServiceErrors.eventsGone("r1", "expired"), errors.eventsGone("r1", "expired")],
  ] as const;
  for (const [domain, api] of cases) {
    assert.ok(domain instanceof RunServiceError);
    assert.equal("status" in domain, false, "no HTTP status in the domain error");
    const answer = apiErrorOf(domain);
    assert.equal(answer?.status, api.status, domain.kind);
    assert.deepEqual(answer?.toBody(), api.toBody(), domain.kind);
  }
  assert.deepEqual(cases.map(([d]) => d.kind), [
    "shutting_down",
    "session_busy",
    "run_not_found",
    "run_not_running",
    "events_gone",
  ]);
});
