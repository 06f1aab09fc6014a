/**
 * Shapes the engine shares with the run service: its dependencies, a run's setup, the state a
 * run starts from, and the payloads of interrupts and resumes.
 */
import type { Price } from "../api/usage.ts";
import type { Logger } from "../log.ts";
import type {
  Message,
  ModelConfig,
  ResumePayload,
  RunRequest,
  ToolCall,
  ToolDefinition,
} from "../api/schemas.ts";
import type { Clock } from "../clock.ts";
import type { Config } from "../config/schema.ts";
import type { ModelClient, ModelTool, ResolvedModel } from "../models/mod.ts";
import type { StepCommit, Store } from "../store/mod.ts";
import type { Tool } from "../tools/mod.ts";

/** Everything the engine needs from the outside; built once per app from its config. */
export interface EngineDeps {
  /** The server's configuration (the manifest). */
  config: Config;
  /** Where sessions, runs, messages and checkpoints live. */
  store: Store;
  /** Streams model responses. */
  models: ModelClient;
  /** Every server tool of the manifest, by name (`buildTools(config)`). */
  tools: Map<string, Tool>;
  /** The MCP servers' tools as they are now (their lists change), by the name the model sees. */
  mcpTools?: () => Map<string, Tool>;
  /** Resolves the run's model (`resolveModel(manifest, run, env)`); throws a `ModelConfigError`. */
  resolveModel: (m: ModelConfig | null | undefined) => ResolvedModel;
  /** Where the engine reports what it cannot tell the client (internal errors, broken tools). */
  log: Logger;
  /** The time stamped on the messages the engine writes (the store's clock; real time by default). */
  clock?: Clock;
}

/** Why a pending tool call waits: a client must run it, or a human must approve it. */
export type PendingKind = "client_tool" | "approval";

/** A tool call the run stopped at; stored in the checkpoint and listed in the interrupt payload. */
export interface PendingToolCall {
  /** The model's id of the call. */
  tool_call_id: string;
  /** The tool the call names. */
  tool_name: string;
  /** The call's arguments. */
  arguments: Record<string, unknown>;
  /** Why it waits. */
  kind: PendingKind;
}

/** `interrupt_payload` of a run that finished `interrupted`. */
export type InterruptPayload =
  | { reason: "tool_calls"; pending: PendingToolCall[] }
  | { reason: "max_steps"; max_steps: number };

/** `result` of a run that finished `completed`. */
export interface RunResult {
  /** Text of the final assistant message ("" when the model said nothing). */
  text: string;
  /** The agent state at the end of the run. */
  context: Record<string, unknown> | null;
}

/**
 * What a run uses (model, capabilities, tools, system prompt, resume payload, step limit): its
 * request resolved against the manifest by `prepareRun`, without I/O, already validated.
 */
export interface RunSetup {
  /** The model the run uses. */
  model: ResolvedModel;
  /** Active capability names, in order. */
  capabilities: string[];
  /** Server tools the model may call in this run. */
  server_tools: Map<string, Tool>;
  /** Client tools of the request, by name. */
  client_tools: Map<string, ToolDefinition>;
  /** Server tools then client tools, as offered to the model. */
  model_tools: ModelTool[];
  /** The system prompt. */
  system: string;
  /** The validated `resume_payload` (null when the run does not resume). */
  resume: ResumePayload | null;
  /** Model steps allowed in one run (manifest `agent.max_steps`). */
  max_steps: number;
  /**
   * Most tokens (input plus output) the run's model steps may use: the lower of the agent's
   * `token_budget` and the request's; null for no limit.
   */
  token_budget: number | null;
  /** The run's model's price (manifest `agent.model.prices`), or null. */
  price: Price | null;
  /** Whether reasoning is streamed to clients (manifest `agent.reasoning`). */
  show_reasoning: boolean;
}

/** How the engine answers one pending call when the run starts. */
export type PendingAnswer =
  | { kind: "result"; result: unknown; is_error: boolean }
  /** A `tool` message of the request's `messages` answers the call (index into them). */
  | { kind: "input_message"; index: number }
  | { kind: "approved" }
  | { kind: "rejected"; reason?: string }
  /** The run does not resume: the call is closed with an error result. */
  | { kind: "unanswered" };

/** A tool call answered at the start of a run, with how it is answered. */
export interface StartAnswer {
  /** The tool call. */
  call: ToolCall;
  /** `incomplete`: a run that made the call ended before it (cancelled or lost). */
  answer: PendingAnswer | { kind: "incomplete" };
}

/** The state a run starts from, loaded (and validated) before the run record exists. */
export interface StartState {
  /** The checkpoint the run continues from (the new run's `parent_checkpoint_id`). */
  parent_checkpoint_id: string | null;
  /** The checkpoint the run forks from (`checkpoint_id`); null when it continues the session. */
  fork_checkpoint_id: string | null;
  /** False when the session does not exist yet (the run record creates it). */
  session_exists: boolean;
  /** The session's conversation clock the state was read at (0 for a new session). */
  clock: number;
  /** The conversation the run starts from, before its input (the fork's when forking). */
  conversation: Message[];
  /** Bytes of JSON of `conversation` and `input`: what the run's output adds to (size.ts). */
  bytes: number;
  /** Context of the start checkpoint (before `request.context` replaces it). */
  context: Record<string, unknown> | null;
  /** Step counter of the start checkpoint; the run's steps continue from it. */
  step: number;
  /**
   * The tool calls of the conversation to answer before the model runs, in conversation order:
   * the start checkpoint's pending calls with their answers, and calls left unfinished by a run
   * that was cancelled or lost.
   */
  answers: StartAnswer[];
  /**
   * The run's input messages as records, stored with the run record, when no call is answered
   * first; empty otherwise (they then follow the answers, inside the run).
   */
  input: Message[];
}

/** The ids of one run. */
export interface RunIds {
  /** The run's tenant. */
  tenant_id: string;
  /** The run's session. */
  session_id: string;
  /** The run. */
  run_id: string;
}

/** Identity and request of one run, as `runAgent` takes them. */
export interface RunInput extends RunIds {
  /** The run request. */
  request: RunRequest;
  /** The result of `loadStart`; loaded (before the first event) when absent. */
  start?: StartState;
}

/** How a caller of `runAgent` takes part in its persistence. */
export interface RunOptions {
  /**
   * Takes over the run's last step boundary: the engine hands its writes (null when it has none)
   * to this function, just before `run_finished`, instead of committing them, so the caller can
   * commit them with the run's outcome in one transaction (`Store.finishRun`). Without it the
   * engine commits the last step itself.
   */
  finish?: (last: StepCommit | null) => void;
  /**
   * The attempt executing the run (1 when omitted). Every write carries it (fencing); an attempt
   * after the first resumes the run: `run_resumed` instead of `run_started`, and the tool calls
   * the lost attempt left without a result are run again only when idempotent.
   */
  attempt?: number;
  /**
   * Whether messages may wait in the run's steering inbox (another request sent them with
   * `multitask_strategy: "steer"`): asked at each step boundary before a model step, and once
   * more after the model answered; true makes the engine take them (`Store.takeSteering`) into
   * the conversation, so the next model step sees them. Each true is one look. Never asked when
   * omitted.
   */
  steered?: () => boolean;
}
