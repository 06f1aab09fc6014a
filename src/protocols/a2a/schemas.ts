/**
 * A2A v1.0 wire shapes (HTTP+JSON binding, ProtoJSON: camelCase fields, SCREAMING_SNAKE_CASE
 * enums): the requests and the Agent Card. Requests are zod schemas (validation and type in one);
 * what the add-on answers of tasks and messages is in responses.ts. `@a2a-js/sdk` types describe
 * decoded protobuf objects (`$case` unions, numeric enums), not this JSON, so they are not reused
 * here.
 */
import { z } from "zod";
import { TASK_STATES } from "./responses.ts";

/** The A2A protocol version this interface speaks (`Major.Minor`, spec §3.6). */
export const A2A_VERSION = "1.0";

/** The protocol binding names advertised in the Agent Card (both served under the base path). */
export const A2A_BINDINGS = { jsonRpc: "JSONRPC", rest: "HTTP+JSON" } as const;

const Metadata = z.record(z.string(), z.unknown());

/**
 * A content part as sent: exactly one of `text`, `raw`, `url`, `data` (checked by the request
 * mapping, which also refuses `raw` and `url`), plus optional descriptors. Unknown fields are
 * ignored (spec §5.7).
 */
export const PartInputSchema = z.object({
  text: z.string().optional().describe("A text part's text."),
  raw: z.string().optional().describe("Inline bytes, base64 (refused: not supported)."),
  url: z.string().optional().describe("A file by URL (refused: not supported)."),
  data: z.unknown().optional().describe("A structured JSON part's value."),
  metadata: Metadata.nullish().describe("The part's metadata (kept, not interpreted)."),
  filename: z.string().nullish().describe("A file part's name."),
  mediaType: z.string().nullish().describe("The part's media type."),
});

/** A message as a client sends it. */
export const MessageInputSchema = z.object({
  messageId: z.string().min(1).describe("The message's id, unique in its context."),
  contextId: z.string().nullish().describe("The context (native session) it continues."),
  taskId: z.string().nullish().describe("The input-required task it answers."),
  // ProtoJSON parsers accept an enum's number too.
  role: z.union([
    z.enum(["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]),
    z.literal(0),
    z.literal(1),
    z.literal(2),
  ])
    .nullish().describe("`ROLE_USER` (`ROLE_AGENT` is refused)."),
  parts: z.array(PartInputSchema).min(1).describe("The content, in order."),
  metadata: Metadata.nullish().describe("The message's metadata."),
  extensions: z.array(z.string()).nullish().describe("URIs of the extensions it uses."),
  referenceTaskIds: z.array(z.string()).nullish().describe("Tasks it refers to."),
});

/** `SendMessageConfiguration`. */
export const SendConfigurationSchema = z.object({
  acceptedOutputModes: z.array(z.string()).nullish().describe(
    "Media types the client accepts in answers.",
  ),
  taskPushNotificationConfig: z.unknown().optional().describe(
    "Push notifications (refused: not supported).",
  ),
  /** Name used by earlier v1.0 drafts; still a push notification request. */
  pushNotificationConfig: z.unknown().optional().describe(
    "Earlier drafts' name of `taskPushNotificationConfig` (refused too).",
  ),
  historyLength: z.number().int().min(0).nullish().describe(
    "Most history messages the answered task holds.",
  ),
  returnImmediately: z.boolean().nullish().describe(
    "`true`: answer the task at once, while it works.",
  ),
});

/** `SendMessageRequest`: the body of `message:send` and `message:stream`. */
export const SendMessageRequestSchema = z.object({
  tenant: z.string().nullish().describe("The tenant (instead of `X-Tenant-ID`)."),
  message: MessageInputSchema.describe("The message to send."),
  configuration: SendConfigurationSchema.nullish().describe("How to answer."),
  metadata: Metadata.nullish().describe("The request's metadata."),
}).meta({ id: "A2aSendMessageRequest", description: "An A2A `SendMessageRequest`." });

/** `CancelTaskRequest` body (optional; the id comes from the path). */
export const CancelTaskRequestSchema = z.object({
  tenant: z.string().nullish().describe("The tenant (instead of `X-Tenant-ID`)."),
  id: z.string().nullish().describe("The task id (must be the path's)."),
  metadata: Metadata.nullish().describe("The request's metadata."),
}).meta({
  id: "A2aCancelTaskRequest",
  description: "The optional body of a task's `:cancel` and `:subscribe`.",
});

/** Task states as a request names them: the ProtoJSON name or, as ProtoJSON parsers accept, its number. */
const TaskStateInput = z.union([
  z.enum(TASK_STATES),
  z.number().int().min(0).max(TASK_STATES.length - 1).transform((n) => TASK_STATES[n]),
]);

/** `GetTaskRequest` (JSON-RPC params; on HTTP+JSON the path and query). */
export const GetTaskRequestSchema = z.object({
  tenant: z.string().nullish(),
  id: z.string().min(1),
  historyLength: z.number().int().min(0).nullish(),
});

/** `SubscribeToTaskRequest` (JSON-RPC params; on HTTP+JSON the path and an optional body). */
export const SubscribeToTaskRequestSchema = z.object({
  tenant: z.string().nullish(),
  id: z.string().min(1),
});

/** Most tasks a ListTasks page holds, and how many without `pageSize` (proto comments). */
export const LIST_PAGE_SIZE = { min: 1, max: 100, default: 50 } as const;

/** `ListTasksRequest` (JSON-RPC params; on HTTP+JSON the query string). */
export const ListTasksRequestSchema = z.object({
  tenant: z.string().nullish(),
  contextId: z.string().nullish(),
  status: TaskStateInput.nullish(),
  pageSize: z.number().int().min(LIST_PAGE_SIZE.min).max(LIST_PAGE_SIZE.max).nullish(),
  pageToken: z.string().nullish(),
  historyLength: z.number().int().min(0).nullish(),
  /** ISO 8601; tasks whose status changed at or after it. */
  statusTimestampAfter: z.string().refine((t) => !Number.isNaN(Date.parse(t)), {
    message: "must be an ISO 8601 timestamp such as 2026-01-01T00:00:00Z",
  }).nullish(),
  includeArtifacts: z.boolean().nullish(),
});

/** A validated part. */
export type PartInput = z.infer<typeof PartInputSchema>;
/** A validated incoming message. */
export type MessageInput = z.infer<typeof MessageInputSchema>;
/** A validated send configuration. */
export type SendConfiguration = z.infer<typeof SendConfigurationSchema>;
/** A validated `SendMessageRequest`. */
export type SendMessageRequest = z.infer<typeof SendMessageRequestSchema>;
/** A validated `GetTaskRequest`. */
export type GetTaskRequest = z.infer<typeof GetTaskRequestSchema>;
/** A validated `ListTasksRequest`. */
export type ListTasksRequest = z.infer<typeof ListTasksRequestSchema>;

/** `AgentInterface`: where and how the agent is served. */
export interface AgentInterface {
  url: string;
  protocolBinding: string;
  protocolVersion: string;
  tenant?: string;
}

/** `AgentSkill`. */
export interface AgentSkill {
  id: string;
  name: string;
  description: string;
  tags: string[];
  examples?: string[];
  inputModes?: string[];
  outputModes?: string[];
}

/** `AgentExtension`: an extension the agent supports. */
export interface AgentExtension {
  uri: string;
  description?: string;
  required: boolean;
  params?: Record<string, unknown>;
}

/** `AgentCard` (the fields we fill). */
export interface AgentCard {
  name: string;
  description: string;
  version: string;
  supportedInterfaces: AgentInterface[];
  capabilities: {
    streaming: boolean;
    pushNotifications: boolean;
    extendedAgentCard: boolean;
    extensions: AgentExtension[];
  };
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: AgentSkill[];
  /** With API keys on: the schemes a client may authenticate with (docs/auth.md). */
  securitySchemes?: Record<string, Record<string, unknown>>;
  /** With API keys on: alternatives, any one of which satisfies the agent. */
  securityRequirements?: { schemes: Record<string, { list: string[] }> }[];
}
