/**
 * A2A v1.0 wire shapes (HTTP+JSON binding, ProtoJSON: camelCase fields, SCREAMING_SNAKE_CASE
 * enums). Requests are zod schemas (validation and type in one); responses are plain interfaces,
 * since we only ever build them. `@a2a-js/sdk` types describe decoded protobuf objects (`$case`
 * unions, numeric enums), not this JSON, so they are not reused here.
 */
import { z } from "zod";

/** The A2A protocol version this interface speaks (`Major.Minor`, spec §3.6). */
export const A2A_VERSION = "1.0";

/** The protocol binding names advertised in the Agent Card (both served under the base path). */
export const A2A_BINDINGS = { jsonRpc: "JSONRPC", rest: "HTTP+JSON" } as const;

/** Task lifecycle states (ProtoJSON enum names). */
export type TaskState =
  | "TASK_STATE_UNSPECIFIED"
  | "TASK_STATE_SUBMITTED"
  | "TASK_STATE_WORKING"
  | "TASK_STATE_COMPLETED"
  | "TASK_STATE_FAILED"
  | "TASK_STATE_CANCELED"
  | "TASK_STATE_INPUT_REQUIRED"
  | "TASK_STATE_REJECTED"
  | "TASK_STATE_AUTH_REQUIRED";

/** Message roles (ProtoJSON enum names). */
export type Role = "ROLE_UNSPECIFIED" | "ROLE_USER" | "ROLE_AGENT";

const Metadata = z.record(z.string(), z.unknown());

/**
 * A content part as sent: exactly one of `text`, `raw`, `url`, `data` (checked by the request
 * mapping, which also refuses `raw` and `url`), plus optional descriptors. Unknown fields are
 * ignored (spec §5.7).
 */
export const PartInputSchema = z.object({
  text: z.string().optional(),
  raw: z.string().optional(),
  url: z.string().optional(),
  data: z.unknown().optional(),
  metadata: Metadata.nullish(),
  filename: z.string().nullish(),
  mediaType: z.string().nullish(),
});

/** A message as a client sends it. */
export const MessageInputSchema = z.object({
  messageId: z.string().min(1),
  contextId: z.string().nullish(),
  taskId: z.string().nullish(),
  // ProtoJSON parsers accept an enum's number too.
  role: z.union([
    z.enum(["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]),
    z.literal(0),
    z.literal(1),
    z.literal(2),
  ])
    .nullish(),
  parts: z.array(PartInputSchema).min(1),
  metadata: Metadata.nullish(),
  extensions: z.array(z.string()).nullish(),
  referenceTaskIds: z.array(z.string()).nullish(),
});

/** `SendMessageConfiguration`. */
export const SendConfigurationSchema = z.object({
  acceptedOutputModes: z.array(z.string()).nullish(),
  taskPushNotificationConfig: z.unknown().optional(),
  /** Name used by earlier v1.0 drafts; still a push notification request. */
  pushNotificationConfig: z.unknown().optional(),
  historyLength: z.number().int().min(0).nullish(),
  returnImmediately: z.boolean().nullish(),
});

/** `SendMessageRequest`: the body of `message:send` and `message:stream`. */
export const SendMessageRequestSchema = z.object({
  tenant: z.string().nullish(),
  message: MessageInputSchema,
  configuration: SendConfigurationSchema.nullish(),
  metadata: Metadata.nullish(),
}).meta({ id: "A2aSendMessageRequest" });

/** `CancelTaskRequest` body (optional; the id comes from the path). */
export const CancelTaskRequestSchema = z.object({
  tenant: z.string().nullish(),
  id: z.string().nullish(),
  metadata: Metadata.nullish(),
}).meta({ id: "A2aCancelTaskRequest" });

/** Task states as a request names them: the ProtoJSON name or, as ProtoJSON parsers accept, its number. */
const TASK_STATES = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED",
] as const;
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

/** A content part as we send it. */
export interface Part {
  text?: string;
  data?: unknown;
  mediaType?: string;
  metadata?: Record<string, unknown>;
}

/** A message as we send it. */
export interface Message {
  messageId: string;
  contextId?: string;
  taskId?: string;
  role: Role;
  parts: Part[];
  metadata?: Record<string, unknown>;
}

/** A task's status. */
export interface TaskStatus {
  state: TaskState;
  message?: Message;
  /** ISO 8601, UTC, millisecond precision. */
  timestamp?: string;
}

/** An output of a task. */
export interface Artifact {
  artifactId: string;
  name?: string;
  description?: string;
  parts: Part[];
  metadata?: Record<string, unknown>;
}

/** A task: one native run. */
export interface Task {
  id: string;
  contextId: string;
  status: TaskStatus;
  artifacts?: Artifact[];
  history?: Message[];
  metadata?: Record<string, unknown>;
}

/** `ListTasksResponse`. */
export interface ListTasksResponse {
  tasks: Task[];
  /** Empty on the last page (spec: always present). */
  nextPageToken: string;
  pageSize: number;
  totalSize: number;
}

/** `TaskStatusUpdateEvent`. */
export interface TaskStatusUpdateEvent {
  taskId: string;
  contextId: string;
  status: TaskStatus;
  metadata?: Record<string, unknown>;
}

/** `TaskArtifactUpdateEvent`. */
export interface TaskArtifactUpdateEvent {
  taskId: string;
  contextId: string;
  artifact: Artifact;
  append: boolean;
  lastChunk: boolean;
  metadata?: Record<string, unknown>;
}

/** One SSE payload: exactly one of its members. */
export type StreamResponse =
  | { task: Task }
  | { message: Message }
  | { statusUpdate: TaskStatusUpdateEvent }
  | { artifactUpdate: TaskArtifactUpdateEvent };

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
