/**
 * The Store's sessions and their current conversation (see ../types.ts).
 */
import type { Usage } from "../../api/usage.ts";
import type { Message, MessageInput, Page, Session } from "../../api/schemas.ts";
import type { PageQuery } from "./page.ts";

/** The session methods of a `Store` (each implementation builds its store from such parts). */
export interface SessionMethods {
  /** Creates a session; `StoreError` `session_exists` when the id exists in the tenant. */
  createSession(
    tenant: string,
    input: { session_id?: string | null; metadata?: Record<string, unknown> | null },
  ): Promise<Session>;
  /** The tenant's session, or null. */
  getSession(tenant: string, sessionId: string): Promise<Session | null>;
  /**
   * The tokens the session's runs used, the sum of their model steps' usage (null when no run
   * reported a step), and their cost (null when no step had a price), summed by the database
   * over the runs' stored reports.
   */
  sessionTotals(
    tenant: string,
    sessionId: string,
  ): Promise<{ usage: Usage | null; cost: number | null }>;
  /** A page of the tenant's sessions, oldest first. */
  listSessions(tenant: string, page: PageQuery): Promise<Page<Session>>;
  /**
   * Deletes a session with its messages, runs and checkpoints. `StoreError` `session_not_found`
   * when absent, `session_busy` while one of its runs is running.
   */
  deleteSession(tenant: string, sessionId: string): Promise<void>;
}

/** The methods of a `Store` on a session's current conversation. */
export interface MessageMethods {
  /**
   * Appends messages to an existing session (`session_not_found` otherwise), generating missing
   * ids; a `message_id` already used in the conversation is `message_exists`. While a run is
   * running in the session it is `session_busy`: the check and the write are one transaction, so
   * a run starting meanwhile cannot slip between them. (A run writes its own messages with
   * `createRun`, `commitStep` and `finishRun`.)
   */
  appendMessages(tenant: string, sessionId: string, messages: MessageInput[]): Promise<Message[]>;
  /** A page of the session's conversation, oldest first (`session_not_found` without it). */
  listMessages(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Message>>;
  /** The whole conversation of a session, oldest first. */
  allMessages(tenant: string, sessionId: string): Promise<Message[]>;
  /** One message of the session's conversation, or null. */
  getMessage(tenant: string, sessionId: string, messageId: string): Promise<Message | null>;
  /**
   * Removes a message from the conversation (checkpoints that saw it keep it); true when there
   * was one. `session_busy` (checked in the transaction) while a run is running.
   */
  deleteMessage(tenant: string, sessionId: string, messageId: string): Promise<boolean>;
}
