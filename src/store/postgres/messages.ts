/**
 * The PostgreSQL store's methods on a session's current conversation: append (one call of
 * `agentd_commit_step`), list, read, and delete (the row stays for the checkpoints that saw it;
 * only its `removed_clock` is set).
 */
import type postgres from "postgres";
import type { Clock } from "../../clock.ts";
import { pageWindow, toPage } from "../cursor.ts";
import { storeErrors } from "../errors.ts";
import { newMessages, toMessage } from "../records.ts";
import type { MessageMethods } from "../types.ts";
import { mapWriteError, messagesParam } from "./boundaries.ts";
import { requireIdle, requireSession } from "./conversation.ts";
import { decode } from "./rows.ts";

/** The message methods of the PostgreSQL store on the pool `sql`. */
export function postgresMessages(sql: postgres.Sql, clock: Clock): MessageMethods {
  return {
    async appendMessages(tenant, sessionId, inputs) {
      const now = clock.now();
      const messages = newMessages(sessionId, inputs, null, now);
      try {
        // A step without a run and without a checkpoint: the same checks, one statement.
        await sql`SELECT agentd_commit_step(${tenant}, ${sessionId}, ${null}, ${now},
          ${messagesParam(messages)}::text::jsonb, ${null}, ${null}, ${null})`;
      } catch (error) {
        throw mapWriteError(error, { session: sessionId });
      }
      return messages;
    },

    async listMessages(tenant, sessionId, page) {
      const { after, limit } = pageWindow(page);
      await requireSession(sql, tenant, sessionId);
      const rows = await sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
        AND session_id = ${sessionId} AND removed_clock IS NULL AND pos > ${after}
        ORDER BY pos LIMIT ${limit}`;
      const [{ n }] = await sql`SELECT count(*) AS n FROM messages
        WHERE tenant_id = ${tenant} AND session_id = ${sessionId} AND removed_clock IS NULL`;
      return toPage(rows.map(decode.message), page.per_page, Number(n), toMessage, (r) => r.pos);
    },

    async allMessages(tenant, sessionId) {
      const rows = await sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
        AND session_id = ${sessionId} AND removed_clock IS NULL ORDER BY pos`;
      return rows.map((r) => toMessage(decode.message(r)));
    },

    async getMessage(tenant, sessionId, messageId) {
      const [row] = await sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
        AND session_id = ${sessionId} AND removed_clock IS NULL AND message_id = ${messageId}`;
      return row ? toMessage(decode.message(row)) : null;
    },

    async deleteMessage(tenant, sessionId, messageId) {
      try {
        return await sql.begin(async (tx) => {
          const [session] = await tx`UPDATE sessions SET updated_at = ${clock.now()},
              message_clock = message_clock + 1
            WHERE tenant_id = ${tenant} AND session_id = ${sessionId} RETURNING message_clock`;
          if (!session) throw storeErrors.sessionNotFound(sessionId);
          await requireIdle(tx, tenant, sessionId, null);
          // The row stays for the checkpoints that saw it; it only leaves the conversation.
          const removed = await tx`UPDATE messages SET removed_clock = ${session.message_clock}
            WHERE tenant_id = ${tenant} AND session_id = ${sessionId} AND removed_clock IS NULL
            AND message_id = ${messageId}`;
          // Nothing changed: roll the clock and updated_at back with the transaction.
          if (removed.count === 0) throw new NothingRemoved();
          return true;
        });
      } catch (error) {
        if (error instanceof NothingRemoved) return false;
        throw error;
      }
    },
  };
}

/** Thrown inside `deleteMessage`'s transaction to roll it back when there was nothing to remove. */
class NothingRemoved extends Error {}
