/**
 * The one internal event model. The engine produces these; the native SSE encoder writes them
 * almost as they are (they already carry the native `kind` names and snake_case fields), the
 * AG-UI and A2A encoders map them. `timestamp` is added when an event is created.
 *
 * Each kind is one zod schema (`RunEventPayloadSchemas`): the TypeScript types below are
 * inferred from them and the OpenAPI document publishes them as the SSE event catalogue, so the
 * catalogue cannot drift from what the engine emits.
 */
import { z } from "zod";
import {
  MessageSchema,
  PatchOperationSchema,
  RunErrorSchema,
  RunStatusSchema,
  SourceFieldsSchema,
} from "./schemas.ts";
import { FinishReasonSchema, UsageSchema } from "./usage.ts";

const StepName = z.enum(["model", "tools"]).describe(
  "`model` (the model answers) or `tools` (the tools it called run).",
);
const Step = z.number().int().describe("The step's number in the run, from 1.");
const SessionId = z.string().describe("The session the run runs in.");
const RunId = z.string().describe("The run's id.");
const MessageId = z.string().describe("The assistant message's id (as stored).");
const ToolCallId = z.string().describe("The tool call's id.");

/** Event payloads by kind (without `kind` and `timestamp`). */
export const RunEventPayloadSchemas = {
  run_started: z.object({ session_id: SessionId, run_id: RunId }).describe("The run began."),
  run_resumed: z.object({
    session_id: SessionId,
    run_id: RunId,
    attempt: z.number().int().describe("The attempt that goes on with the run (2, 3, ...)."),
  }).describe(
    "The run goes on as a new attempt, from its last checkpoint, after its replica was lost or " +
      "handed it over (extension): whatever the stream carried after that checkpoint is " +
      "abandoned, and a `messages_snapshot` of the conversation at the checkpoint follows.",
  ),
  run_queued: z.object({
    session_id: SessionId,
    run_id: RunId,
    queue_depth: z.number().int().nullable().describe(
      "Runs waiting in the run queue over all tenants as it was queued, itself included (null " +
        "when the store could not count them).",
    ),
  }).describe(
    "An attached run waits in the run queue for a free slot (extension; " +
      '`runtime.runs.attached_at_capacity = "wait"`): keep-alives follow until it starts ' +
      "(`run_started`). Sent live only, without an `id` (a cursor never replays it).",
  ),
  messages_snapshot: z.object({
    messages: z.array(MessageSchema).describe("The session's conversation, oldest first."),
  }).describe("The whole conversation the run starts from."),
  messages_added: z.object({
    messages: z.array(MessageSchema).describe(
      "The messages, as stored: `user` messages, usually, with this run's `run_id`.",
    ),
  }).describe(
    'Messages sent to the running run by another request (`multitask_strategy: "steer"`, ' +
      "an extension) joined its conversation at a step boundary: the next model step sees them.",
  ),
  step_started: z.object({ step: Step, step_name: StepName }).describe(
    "A model or tools step began.",
  ),
  step_finished: z.object({ step: Step, step_name: StepName }).describe(
    "A model or tools step ended (its checkpoint is saved).",
  ),
  text_message_start: z.object({
    message_id: MessageId,
    role: z.literal("assistant").describe("Always `assistant`."),
  }).describe("An assistant message begins."),
  text_message_content: z.object({
    message_id: MessageId,
    delta: z.string().describe("The next chunk of the message's text."),
  }).describe("A chunk of the assistant message's text."),
  text_message_end: z.object({ message_id: MessageId }).describe(
    "The assistant message is complete.",
  ),
  reasoning_message_start: z.object({
    message_id: z.string().describe("The reasoning's id (one per reasoning block)."),
    parent_message_id: z.string().describe("The assistant message the reasoning belongs to."),
  }).describe("The model begins a block of reasoning (stored as a `reasoning` part)."),
  reasoning_message_content: z.object({
    message_id: z.string().describe("The reasoning's id."),
    delta: z.string().describe("The next chunk of the reasoning text."),
  }).describe("A chunk of the model's reasoning."),
  reasoning_message_end: z.object({
    message_id: z.string().describe("The reasoning's id."),
    encrypted_value: z.string().optional().describe(
      "The provider's encrypted reasoning, when it sent only that (Anthropic redacted thinking).",
    ),
  }).describe("The block of reasoning is complete."),
  source: z.object({ message_id: MessageId, ...SourceFieldsSchema.shape }).describe(
    "A source the model used (a web search result) or a citation of one (`cited_text`), stored " +
      "as a `source` part of the assistant message.",
  ),
  tool_call_start: z.object({
    tool_call_id: ToolCallId,
    tool_name: z.string().describe("The tool called (a server or a client tool)."),
    parent_message_id: z.string().describe("The assistant message that makes the call."),
    provider_executed: z.literal(true).optional().describe(
      "Present when the provider runs the call itself (web search, MCP connector): agentd " +
        "never runs it; its `tool_call_result` is the provider's.",
    ),
  }).describe("The model begins a tool call."),
  tool_call_args: z.object({
    tool_call_id: ToolCallId,
    delta: z.string().describe("The next chunk of the call's arguments, JSON text."),
  }).describe("A chunk of the tool call's JSON arguments."),
  tool_call_end: z.object({ tool_call_id: ToolCallId }).describe(
    "The tool call's arguments are complete.",
  ),
  tool_call_result: z.object({
    tool_call_id: ToolCallId,
    message_id: z.string().describe("The `tool` message that stores the result."),
    content: z.unknown().describe("What the model sees."),
    is_error: z.boolean().describe("Whether the call failed (`content` then says why)."),
    provider_executed: z.literal(true).optional().describe(
      "Present when the result is the provider's own (a call the provider ran).",
    ),
  }).describe("A server tool's result (or a provider-run call's)."),
  state_snapshot: z.object({
    context: z.record(z.string(), z.unknown()).nullable().describe(
      "The agent state (null when nothing set it yet).",
    ),
  }).describe("The whole agent state (the `context`)."),
  state_delta: z.object({
    delta: z.array(PatchOperationSchema).describe("RFC 6902 operations, in order."),
  }).describe(
    "An incremental change of the `context`, as patch operations rooted at the context.",
  ),
  custom: z.object({
    name: z.string().describe("The name the tool gave the update."),
    value: z.unknown().describe("The update (any JSON value)."),
  }).describe("A live update a tool emitted (`emit(name, value)`); never persisted."),
  run_finished: z.object({
    session_id: SessionId,
    run_id: RunId,
    status: RunStatusSchema.describe("How the run ended."),
    interrupt_payload: z.record(z.string(), z.unknown()).nullable().describe(
      "What an `interrupted` run waits for (as on the run record); else null.",
    ),
    result: z.unknown().describe(
      "A completed run's result, `{ text, context }`; else null (as on the run record).",
    ),
    error: RunErrorSchema.nullish().describe("Why a `failed` run failed."),
    usage: UsageSchema.nullish().describe(
      "The tokens of all the run's model steps, as on the run record (null without a model step).",
    ),
    finish_reason: FinishReasonSchema.nullish().describe(
      "Why the model stopped in the run's last model step (`length`, `content_filter`, " +
        "`refusal`, ...), as on the run record.",
    ),
    cost: z.number().nonnegative().nullish().describe(
      "What the run's model steps cost at the model's price in the manifest " +
        "(`agent.model.prices`), as on the run record (null without a price).",
    ),
  }).describe("The run ended with its final status (the last event of a stream)."),
} as const;

/** A source's fields (a `source` event's or a stored `source` part's). */
export type SourceFields = z.infer<typeof SourceFieldsSchema>;

/** A source's fields in camelCase (AG-UI's CUSTOM `source`, A2A's data part), those it has. */
export function camelSource(source: SourceFields): Record<string, string> {
  const out: Record<string, string> = {
    sourceId: source.source_id,
    sourceType: source.source_type,
  };
  if (source.url !== undefined) out.url = source.url;
  if (source.title !== undefined) out.title = source.title;
  if (source.media_type !== undefined) out.mediaType = source.media_type;
  if (source.filename !== undefined) out.filename = source.filename;
  if (source.cited_text !== undefined) out.citedText = source.cited_text;
  return out;
}

/** Event payloads by kind (without `kind` and `timestamp`). */
export type RunEventPayloads = {
  [K in keyof typeof RunEventPayloadSchemas]: z.infer<(typeof RunEventPayloadSchemas)[K]>;
};

/** Every event kind. */
export type RunEventKind = keyof RunEventPayloads;

/** Every event kind, in the order of the catalogue. */
export const RUN_EVENT_KINDS = Object.keys(RunEventPayloadSchemas) as RunEventKind[];

/** A whole event of one kind: `kind`, `timestamp` (fractional epoch seconds) and the payload. */
function eventSchema<K extends RunEventKind>(kind: K) {
  const payload = RunEventPayloadSchemas[kind];
  return z.object({
    kind: z.literal(kind).describe("The event's kind (also the SSE frame's `event:`)."),
    timestamp: z.number().describe("Seconds since the epoch, fractional."),
    ...payload.shape,
  }).meta({ id: eventComponent(kind), description: payload.description ?? kind });
}

/** The OpenAPI component name of an event kind: `run_started` -> `RunStartedEvent`. */
export function eventComponent(kind: string): string {
  return kind.split("_").map((w) => w[0].toUpperCase() + w.slice(1)).join("") + "Event";
}

/** Whole event schemas by kind. */
type RunEventSchemas = { [K in RunEventKind]: ReturnType<typeof eventSchema<K>> };

let anyEvent: z.ZodType<RunEvent> | undefined;

/**
 * Any run event, discriminated by `kind`: the catalogue the API reference publishes and tests
 * check frames against, with a schema per kind (what a native SSE frame's `data:` line holds).
 * Typed as a schema of `RunEvent` (the union zod infers is the same shape). Built on first use
 * (the API reference, tests), not at start-up.
 */
export function runEventSchema(): z.ZodType<RunEvent> {
  if (anyEvent) return anyEvent;
  const byKind = Object.fromEntries(
    RUN_EVENT_KINDS.map((kind) => [kind, eventSchema(kind)]),
  ) as RunEventSchemas;
  return anyEvent = z.discriminatedUnion(
    "kind",
    Object.values(byKind) as unknown as [z.ZodObject, ...z.ZodObject[]],
  ).meta({
    id: "RunEvent",
    description: "One run event: the `data:` of a native SSE frame whose `event:` is its `kind`.",
  }) as unknown as z.ZodType<RunEvent>;
}

/** One internal run event. */
export type RunEvent = {
  [K in RunEventKind]: { kind: K; timestamp: number } & RunEventPayloads[K];
}[RunEventKind];

/** An event of one kind. */
export type RunEventOf<K extends RunEventKind> = Extract<RunEvent, { kind: K }>;

/** Creates an event stamped with the current time in fractional epoch seconds. */
export function makeEvent<K extends RunEventKind>(
  kind: K,
  payload: RunEventPayloads[K],
): RunEventOf<K> {
  // Sub-millisecond wall-clock time: latency between replicas is measured from these stamps.
  const timestamp = (performance.timeOrigin + performance.now()) / 1000;
  return { kind, timestamp, ...payload } as unknown as RunEventOf<K>;
}

// Each event is encoded once, by whichever listener needs its JSON first (pub/sub, the native
// stream), and not at all when none does; a WeakMap lets events go as soon as nobody holds them.
const encoded = new WeakMap<RunEvent, string>();

/**
 * Records `json` as the encoding of `event`, which was just parsed from it (a run channel's
 * message): a stream replaying a large event then does not encode it again. `json` must be what
 * `JSON.stringify` gives for the event, as any text it produced is.
 */
export function primeEncoding(event: RunEvent, json: string): void {
  encoded.set(event, json);
}

/** The event as JSON, computed once per event object. */
export function encodeEvent(event: RunEvent): string {
  let json = encoded.get(event);
  if (json === undefined) {
    json = JSON.stringify(event);
    encoded.set(event, json);
  }
  return json;
}

/**
 * Marks the end of a stream that did not end with `run_finished`: live delivery was lost (a
 * re-attach subscriber fell behind its capacity, the pub/sub transport went away, or an attached
 * client read too slowly and was dropped while its run goes on). Part of the stream contract
 * every encoder handles.
 */
export interface EndNotice {
  /** Why live delivery ended before `run_finished`. */
  notice: "subscriber_overflow" | "transport_lost" | "slow_consumer";
}

/**
 * A run event and its sequence number in the run (1, 2, 3 …), which every wire frame of every
 * protocol carries as its SSE `id:`, so one cursor resumes any stream. `seq` is null only for a
 * `run_finished` a re-attach stream read from the store because it could not hear the run (a
 * `memory` pub/sub in another process): it has no place in the sequence, and its frame no id.
 */
export interface SequencedEvent {
  seq: number | null;
  event: RunEvent;
}

/** What a run's event stream delivers: its events in order, possibly ended by a notice. */
export type RunStreamItem = SequencedEvent | EndNotice;
