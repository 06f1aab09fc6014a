/**
 * The official TypeScript client of agentd (`@agentd/agentd/client`): typed calls for sessions,
 * messages, checkpoints and runs of the native API, run streams as async iterables of typed run
 * events that resume by cursor after a dropped connection, and errors as `AgentdError`s carrying
 * the server's `code`. It needs nothing but `fetch` (Deno, Node 18+, browsers, workers).
 *
 * ```ts
 * import { AgentdClient } from "@agentd/agentd/client";
 *
 * const agentd = new AgentdClient({ baseUrl: "http://127.0.0.1:8080" });
 * const run = agentd.runs.stream({
 *   messages: [{ role: "user", content: [{ type: "text", value: "hello" }] }],
 * });
 * for await (const event of run) {
 *   if (event.kind === "text_message_content") console.log(event.delta);
 * }
 * ```
 *
 * See docs/client.md.
 *
 * @module
 */
export { AgentdClient, Checkpoints, Messages, Runs, Sessions } from "./client.ts";
export { AgentdError, ERROR_CODES, type ErrorCode } from "./errors.ts";
export type { ClientOptions } from "./http.ts";
export { type ReconnectOptions, RunStream, type RunStreamOptions } from "./run_stream.ts";
export type {
  Checkpoint,
  CheckpointState,
  FieldError,
  FieldRuleError,
  ListQuery,
  Message,
  MessageInput,
  Page,
  Part,
  Run,
  RunError,
  RunEvent,
  RunEventKind,
  RunEventOf,
  RunListQuery,
  RunRequest,
  RunStarted,
  RunStatus,
  RunStep,
  SentRequest,
  Session,
  SessionCreate,
  ToolCall,
  ToolCallTrace,
  ToolDefinition,
} from "./types.ts";
