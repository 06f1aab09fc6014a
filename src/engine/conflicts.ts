/**
 * Conflicts inside one run request: what each field allows on its own but the request as a whole
 * cannot mean (two messages with one id, one tool call id given twice, two answers to one call,
 * two context variables of one name). Found before anything is written, so a conflicting request
 * is a 422 and never a run that fails once its messages reach the store.
 */
import type { RunRequest } from "../api/schemas.ts";
import type { FieldError } from "../errors.ts";

/** The conflicts of `request`, as validation field errors (empty when there are none). */
export function requestConflicts(request: RunRequest): FieldError[] {
  const messageIds: Entry[] = [];
  const toolCallIds: Entry[] = [];
  const answers: Entry[] = [];
  request.messages.forEach((m, i) => {
    if (m.message_id !== undefined) messageIds.push([m.message_id, `messages.${i}.message_id`]);
    m.tool_calls?.forEach((call, j) =>
      toolCallIds.push([call.id, `messages.${i}.tool_calls.${j}.id`])
    );
    if (m.role === "tool" && m.tool_call_id !== undefined) {
      answers.push([m.tool_call_id, `messages.${i}.tool_call_id`]);
    }
  });
  // The description names the variable in the prompt: two of one name give the model two values.
  const contextVars: Entry[] = (request.context_vars ?? []).map((v, i) => [
    v.description,
    `context_vars.${i}.description`,
  ]);
  return [
    ...repeated(messageIds, "duplicate_id", (v) => `the message id '${v}' is used twice`),
    ...repeated(toolCallIds, "duplicate_id", (v) => `the tool call id '${v}' is used twice`),
    ...repeated(answers, "duplicate_answer", (v) => `the tool call '${v}' is answered twice`),
    ...repeated(
      contextVars,
      "duplicate_context_var",
      (v) => `the context variable '${v}' is given twice`,
    ),
  ];
}

/** A value and the field path it was given at. */
type Entry = [value: string, field: string];

/** A field error for every entry whose value an earlier entry already has. */
function repeated(
  entries: Entry[],
  code: string,
  message: (value: string) => string,
): FieldError[] {
  const seen = new Set<string>();
  const out: FieldError[] = [];
  for (const [value, field] of entries) {
    if (seen.has(value)) {
      out.push({ field, errors: [{ code, message: message(value), params: { value } }] });
    }
    seen.add(value);
  }
  return out;
}
