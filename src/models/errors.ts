/**
 * The model resolution's refusal: a model block or a run's `model` that names no usable model (an
 * unknown provider, a model the agent does not allow, none at all). Models know nothing of HTTP;
 * the HTTP edge answers it as a validation error of its field (src/http/kit/errors.ts), and
 * `agentd check` lists it as a manifest problem.
 */
import type { FieldError } from "../errors.ts";

/** What is wrong with the model configuration. */
export type ModelConfigErrorKind = "unknown_provider" | "unknown_model" | "model_required";

/** The rule code of each kind, as the field error names it (docs/errors.md). */
const RULE_CODES: Record<ModelConfigErrorKind, string> = {
  unknown_provider: "unknown_provider",
  unknown_model: "unknown_model",
  model_required: "required",
};

/** A model configuration that resolves to no usable model; `fields` names the field at fault. */
export class ModelConfigError extends Error {
  /** What is wrong. */
  readonly kind: ModelConfigErrorKind;
  /** The field at fault (`model.override.provider`, `agent.model.model`, ...) with its rule. */
  readonly fields: FieldError[];

  /** An error of `kind` about `field`, saying `message` (and `params` for a client). */
  constructor(
    kind: ModelConfigErrorKind,
    field: string,
    message: string,
    params?: Record<string, unknown>,
  ) {
    super(message);
    this.name = "ModelConfigError";
    this.kind = kind;
    const rule = { code: RULE_CODES[kind], message, ...(params ? { params } : {}) };
    this.fields = [{ field, errors: [rule] }];
  }
}
