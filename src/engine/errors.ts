/**
 * The engine's refusals: a run request it will not run, in the engine's terms (the request
 * contradicts itself or the manifest, names a checkpoint that does not exist, reuses a message
 * id). The engine knows nothing of HTTP; the HTTP edge maps each kind onto its status and code
 * (src/http/kit/errors.ts, docs/errors.md).
 */
import type { FieldError } from "../errors.ts";

/** What kind of refusal an `EngineError` is. */
export type EngineErrorKind =
  | "invalid_request"
  | "checkpoint_not_found"
  | "message_exists"
  | "too_large"
  | "message_too_large";

/** A run request the engine refuses before anything is written. */
export class EngineError extends Error {
  /** What was refused. */
  readonly kind: EngineErrorKind;
  /** The checkpoint or message concerned (empty for `invalid_request`). */
  readonly id: string;
  /** `invalid_request`: each field of the request that is refused, with its rules. */
  readonly fields: FieldError[];

  /** A refusal of `kind` about `id`, or of the request's `fields`. */
  constructor(kind: EngineErrorKind, message: string, id = "", fields: FieldError[] = []) {
    super(message);
    this.name = "EngineError";
    this.kind = kind;
    this.id = id;
    this.fields = fields;
  }
}

/** Constructors of every `EngineError` the engine throws. */
export const engineErrors = {
  /** The request's `fields` are refused (validation-style: each field with its rules). */
  invalidRequest: (fields: FieldError[]) =>
    new EngineError("invalid_request", `invalid run request: ${summary(fields)}`, "", fields),
  checkpointNotFound: (id: string) =>
    new EngineError("checkpoint_not_found", `checkpoint '${id}' not found`, id),
  messageExists: (id: string) =>
    new EngineError("message_exists", `message '${id}' already exists`, id),
  /** A write that would take a session past its cap. */
  tooLarge: (message: string) => new EngineError("too_large", message),
  /** A message over the per-message cap. */
  messageTooLarge: (message: string) => new EngineError("message_too_large", message),
} as const;

/** `field: rule message; ...`, for logs and tests. */
function summary(fields: FieldError[]): string {
  return fields.flatMap((f) => f.errors.map((e) => `${f.field}: ${e.message ?? e.code}`))
    .join("; ");
}
