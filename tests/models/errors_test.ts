/**
 * Model resolution's refusal (models/errors.ts) is a domain error naming its field; the HTTP edge
 * answers it as a validation error of that field.
 */
import assert from "node:assert/strict";
import { errors, type FieldError } from "../../src/errors.ts";
import { apiErrorOf } from "../../src/http/kit/mod.ts";
import { ModelConfigError } from "../../src/models/mod.ts";

Deno.test("model config errors: a validation error of their field, rule code per kind", () => {
  const cases: [ModelConfigError, FieldError][] = [
    [new ModelConfigError("unknown_provider", "model.override.provider", "no", { known: [] }), {
      field: "model.override.provider",
      errors: [{ code: "unknown_provider", message: "no", params: { known: [] } }],
    }],
    [new ModelConfigError("unknown_model", "model.override.model", "not allowed"), {
      field: "model.override.model",
      errors: [{ code: "unknown_model", message: "not allowed" }],
    }],
    [new ModelConfigError("model_required", "agent.model.model", "name one"), {
      field: "agent.model.model",
      errors: [{ code: "required", message: "name one" }],
    }],
  ];
  for (const [domain, field] of cases) {
    assert.equal(domain.message, field.errors[0].message);
    assert.deepEqual(apiErrorOf(domain)?.toBody(), errors.validation([field]).toBody());
    assert.equal(apiErrorOf(domain)?.status, 422);
  }
});
