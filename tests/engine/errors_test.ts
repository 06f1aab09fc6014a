/**
 * The engine's refusals (engine/errors.ts) are domain errors, and the HTTP edge answers each kind
 * with the status, code and body of docs/errors.md (the validation shape for `invalid_request`).
 */
import assert from "node:assert/strict";
import { EngineError } from "../../src/engine/mod.ts";
import { engineErrors } from "../../src/engine/errors.ts";
import { errors, type FieldError } from "../../src/errors.ts";
import { apiErrorOf } from "../../src/http/kit/mod.ts";

Deno.test("engine errors: each kind answers as its API error", () => {
  const fields: FieldError[] = [{
    field: "resume_payload",
    errors: [{ code: "nothing_to_resume", message: "nothing" }],
  }];
  const cases = [
    [engineErrors.invalidRequest(fields), errors.validation(fields)],
    [engineErrors.checkpointNotFound("c1"), errors.checkpointNotFound("c1")],
    [engineErrors.messageExists("m1"), errors.messageExists("m1")],
  ] as const;
  for (const [domain, api] of cases) {
    assert.ok(domain instanceof EngineError);
    const answer = apiErrorOf(domain);
    assert.equal(answer?.status, api.status, domain.kind);
    assert.deepEqual(answer?.toBody(), api.toBody(), domain.kind);
  }
  assert.deepEqual(cases.map(([d]) => d.kind), [
    "invalid_request",
    "checkpoint_not_found",
    "message_exists",
  ]);
  assert.equal(cases[0][0].message, "invalid run request: resume_payload: nothing");
});
