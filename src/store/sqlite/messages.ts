/**
 * The SQLite store's methods on a session's current conversation: append, list, read, and
 * delete (the row stays for the checkpoints that saw it; only its `removed_clock` is set).
 */
import type { Clock } from "../../clock.ts";
import { pageWindow, toPage } from "../cursor.ts";
import { storeErrors } from "../errors.ts";
import { newMessages, toMessage } from "../records.ts";
import type { MessageMethods } from "../types.ts";
import { attempt, type Connection } from "./connection.ts";
import {
  advance,
  currentMessages,
  insertMessages,
  requireIdle,
  requireSession,
} from "./conversation.ts";
import type { GroupCommit } from "./group_commit.ts";
import { CURRENT, decode, MESSAGE_COLUMNS } from "./rows.ts";

/** The message methods of the SQLite store on `conn`. */
export function sqliteMessages(
  conn: Connection,
  commits: GroupCommit,
  clock: Clock,
): MessageMethods {
  return {
    appendMessages(tenant, sessionId, inputs) {
      return commits.durable(() => {
        const now = clock.now();
        const messages = newMessages(sessionId, inputs, null, now);
        commits.write(() => {
          const at = advance(conn, tenant, sessionId, messages.length, now);
          if (at === null) throw storeErrors.sessionNotFound(sessionId);
          requireIdle(conn, tenant, sessionId, null);
          insertMessages(conn, tenant, sessionId, messages, at);
        });
        return messages;
      });
    },

    listMessages(tenant, sessionId, page) {
      return attempt(() => {
        const { after, limit } = pageWindow(page);
        requireSession(conn, tenant, sessionId);
        const rows = conn.all(
          `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${CURRENT} AND pos > ?
           ORDER BY pos LIMIT ?`,
          tenant,
          sessionId,
          after,
          limit,
        ).map(decode.message);
        const count = conn.get(
          `SELECT count(*) AS n FROM messages WHERE ${CURRENT}`,
          tenant,
          sessionId,
        )!;
        return toPage(rows, page.per_page, count.n as number, toMessage, (r) => r.pos);
      });
    },

    allMessages(tenant, sessionId) {
      return attempt(() => currentMessages(conn, tenant, sessionId));
    },

    getMessage(tenant, sessionId, messageId) {
      return attempt(() => {
        const row = conn.get(
          `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE ${CURRENT} AND message_id = ?`,
          tenant,
          sessionId,
          messageId,
        );
        return row ? toMessage(decode.message(row)) : null;
      });
    },

    deleteMessage(tenant, sessionId, messageId) {
      return commits.durable(() => {
        return commits.write(() => {
          const at = advance(conn, tenant, sessionId, 1, clock.now());
          if (at === null) throw storeErrors.sessionNotFound(sessionId);
          requireIdle(conn, tenant, sessionId, null);
          // The row stays for the checkpoints that saw it; it only leaves the conversation.
          const removed = conn.run(
            `UPDATE messages SET removed_clock = ? WHERE ${CURRENT} AND message_id = ?`,
            at + 1,
            tenant,
            sessionId,
            messageId,
          ) > 0;
          // Nothing changed: roll the clock and updated_at back with the transaction.
          if (!removed) throw new NothingRemoved();
          return true;
        });
      }).catch((error) => {
        if (error instanceof NothingRemoved) return false;
        throw error;
      });
    },
  };
}

/** Thrown inside `deleteMessage`'s transaction to roll it back when there was nothing to remove. */
class NothingRemoved extends Error {}
