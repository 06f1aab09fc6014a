/** Attempts (runs/attempts.ts): how a claimed run is planned again, and who goes on with it. */
import assert from "node:assert/strict";
import { passedOn, resumedActive, resumedRequest } from "../../src/runs/attempts.ts";
import type { ClaimedRun } from "../../src/store/mod.ts";

const claimed = (over: Partial<ClaimedRun> = {}): ClaimedRun => ({
  tenant_id: "t1",
  run_id: "r1",
  session_id: "s1",
  owner: "gone",
  attempt: 2,
  checkpoint_id: "cp-3",
  request: {
    model: { name: "m" },
    context: { a: 1 },
    checkpoint_id: "fork",
    resume_payload: { approvals: [] },
    messages: [],
    tools: [{ name: "t", description: "d", parameters: {} }],
  },
  ...over,
});

Deno.test("attempts: a claimed run is planned again without input, fork or resume", () => {
  const request = resumedRequest(claimed());
  assert.deepEqual(request, {
    model: { name: "m" },
    // The run's checkpoint holds a newer context than its request.
    context: null,
    checkpoint_id: null,
    resume_payload: null,
    messages: [],
    tools: [{ name: "t", description: "d", parameters: {} }],
    session_id: "s1",
    run_id: "r1",
  });
  // Lost before its first checkpoint: the request's context still applies.
  assert.deepEqual(resumedRequest(claimed({ checkpoint_id: null })).context, { a: 1 });
  // A run kept without a request (written outside a run request) still resumes.
  assert.deepEqual(resumedRequest(claimed({ request: null })).messages, []);
});

Deno.test("attempts: the new attempt is detached; handed-over and fenced runs pass on", () => {
  const active = resumedActive(claimed());
  assert.equal(active.attempt, 2);
  assert.equal(active.attached, undefined);
  assert.equal(passedOn(active), false);
  assert.equal(passedOn({ ...active, reason: "handoff" }), true);
  assert.equal(passedOn({ ...active, reason: "fenced" }), true);
  assert.equal(passedOn({ ...active, reason: "cancelled" }), false);
});
