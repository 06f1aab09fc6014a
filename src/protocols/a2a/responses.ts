/**
 * What the A2A add-on answers, as zod schemas (ProtoJSON: camelCase fields, SCREAMING_SNAKE_CASE
 * enums): the tasks, messages and stream responses it builds are typed from them, and the API
 * reference documents its bodies and the events of its streams with them, so a generated client
 * reads typed tasks and updates.
 */
import { z } from "zod";

const Metadata = z.record(z.string(), z.unknown());

/** Task lifecycle states (ProtoJSON enum names). */
export const TASK_STATES = [
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

const TaskStateSchema = z.enum(TASK_STATES).meta({
  id: "A2aTaskState",
  description: "Where a task is (`TASK_STATE_INPUT_REQUIRED`: it waits for the client).",
});

/** Message roles (ProtoJSON enum names). */
const RoleSchema = z.enum(["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"]).meta({
  id: "A2aRole",
  description: "Who wrote a message.",
});

/** A content part as we send it. */
const PartSchema = z.object({
  text: z.string().optional().describe("A text part's text."),
  data: z.unknown().optional().describe("A structured part's JSON value."),
  mediaType: z.string().optional().describe("The part's media type."),
  metadata: Metadata.optional().describe("The part's metadata."),
}).meta({ id: "A2aPart", description: "A content part: text or data." });

/** A message as we send it. */
const MessageSchema = z.object({
  messageId: z.string().describe("The message's id."),
  contextId: z.string().optional().describe("Its context (the native session)."),
  taskId: z.string().optional().describe("Its task (a native run)."),
  role: RoleSchema.describe("Who wrote it."),
  parts: z.array(PartSchema).describe("Its content, in order."),
  metadata: Metadata.optional().describe("Its metadata."),
}).meta({ id: "A2aMessage", description: "An A2A message." });

/** A task's status. */
const TaskStatusSchema = z.object({
  state: TaskStateSchema.describe("Where the task is."),
  message: MessageSchema.optional().describe("What the agent says about it."),
  timestamp: z.string().optional().describe("When it got here (ISO 8601, UTC, milliseconds)."),
}).meta({ id: "A2aTaskStatus", description: "A task's status." });

/** An output of a task. */
const ArtifactSchema = z.object({
  artifactId: z.string().describe("The artifact's id."),
  name: z.string().optional().describe("Its name."),
  description: z.string().optional().describe("What it is."),
  parts: z.array(PartSchema).describe("Its content."),
  metadata: Metadata.optional().describe("Its metadata."),
  extensions: z.array(z.string()).optional().describe(
    "The extensions whose data it holds (agentd's `sources` and `reasoning` artifacts).",
  ),
}).meta({ id: "A2aArtifact", description: "An output of a task (the answer, the state)." });

/** A task: one native run. */
export const TaskSchema = z.object({
  id: z.string().describe("The task's id (the native run's)."),
  contextId: z.string().describe("Its context (the native session)."),
  status: TaskStatusSchema.describe("Where it is."),
  artifacts: z.array(ArtifactSchema).optional().describe("What it produced."),
  history: z.array(MessageSchema).optional().describe("Its conversation (`historyLength`)."),
  metadata: Metadata.optional().describe("Its metadata."),
}).meta({ id: "A2aTask", description: "An A2A task: one native run (docs/a2a.md)." });

/** `SendMessageResponse` as this agent answers it: always the task. */
export const SendMessageResponseSchema = z.object({
  task: TaskSchema.describe("The task the message started or continued."),
}).meta({ id: "A2aSendMessageResponse", description: "The answer of `message:send`." });

/** `ListTasksResponse`. */
export const ListTasksResponseSchema = z.object({
  tasks: z.array(TaskSchema).describe("This page's tasks."),
  nextPageToken: z.string().describe("The next page's `pageToken`; empty on the last page."),
  pageSize: z.number().int().describe("The page size asked for."),
  totalSize: z.number().int().describe("How many tasks match in all."),
}).meta({ id: "A2aListTasksResponse", description: "A page of tasks." });

/** `TaskStatusUpdateEvent`. */
const TaskStatusUpdateEventSchema = z.object({
  taskId: z.string().describe("The task."),
  contextId: z.string().describe("Its context."),
  status: TaskStatusSchema.describe("Its new status."),
  metadata: Metadata.optional().describe("The update's metadata."),
}).meta({ id: "A2aTaskStatusUpdateEvent", description: "A task's status changed." });

/** `TaskArtifactUpdateEvent`. */
const TaskArtifactUpdateEventSchema = z.object({
  taskId: z.string().describe("The task."),
  contextId: z.string().describe("Its context."),
  artifact: ArtifactSchema.describe("The artifact, or the chunk of it this update appends."),
  append: z.boolean().describe("Whether the parts append to the artifact of the same id."),
  lastChunk: z.boolean().describe("Whether the artifact is complete."),
  metadata: Metadata.optional().describe("The update's metadata."),
}).meta({ id: "A2aTaskArtifactUpdateEvent", description: "A task's artifact grew." });

/** One SSE payload: exactly one of its members. */
export const StreamResponseSchema = z.union([
  z.object({ task: TaskSchema.describe("The task as it is (the first frame).") }).strict(),
  z.object({ message: MessageSchema.describe("A message (not sent by this agent).") }).strict(),
  z.object({ statusUpdate: TaskStatusUpdateEventSchema.describe("A status update.") }).strict(),
  z.object({
    artifactUpdate: TaskArtifactUpdateEventSchema.describe("An artifact update."),
  }).strict(),
]).meta({
  id: "A2aStreamResponse",
  description: "One frame of an A2A stream: exactly one of `task`, `message`, `statusUpdate`, " +
    "`artifactUpdate`.",
});

/** Task lifecycle states (ProtoJSON enum names). */
export type TaskState = z.infer<typeof TaskStateSchema>;
/** Message roles (ProtoJSON enum names). */
export type Role = z.infer<typeof RoleSchema>;
/** A content part as we send it. */
export type Part = z.infer<typeof PartSchema>;
/** A message as we send it. */
export type Message = z.infer<typeof MessageSchema>;
/** A task's status. */
export type TaskStatus = z.infer<typeof TaskStatusSchema>;
/** An output of a task. */
export type Artifact = z.infer<typeof ArtifactSchema>;
/** A task: one native run. */
export type Task = z.infer<typeof TaskSchema>;
/** `ListTasksResponse`. */
export type ListTasksResponse = z.infer<typeof ListTasksResponseSchema>;
/** `TaskStatusUpdateEvent`. */
export type TaskStatusUpdateEvent = z.infer<typeof TaskStatusUpdateEventSchema>;
/** `TaskArtifactUpdateEvent`. */
export type TaskArtifactUpdateEvent = z.infer<typeof TaskArtifactUpdateEventSchema>;
/** One SSE payload: exactly one of its members. */
export type StreamResponse = z.infer<typeof StreamResponseSchema>;
