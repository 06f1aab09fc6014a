/**
 * The SQLite store's checkpoints, read back as records with the conversation of their moment
 * (every message row visible at the checkpoint's clock). A page reads its conversations at once.
 */
import type { Checkpoint } from "../../api/schemas.ts";
import { cutPage, pageWindow, toPage } from "../cursor.ts";
import {
  CHECKPOINT_PAGE_MESSAGES,
  type CheckpointRow,
  checkpointsOf,
  checkpointsThatFit,
  toMessage,
} from "../records.ts";
import type { CheckpointMethods } from "../types.ts";
import { attempt, type Connection } from "./connection.ts";
import { requireSession } from "./conversation.ts";
import { CHECKPOINT_COLUMNS, decode, MESSAGE_COLUMNS } from "./rows.ts";

/** The checkpoint methods of the SQLite store on `conn`. */
export function sqliteCheckpoints(conn: Connection): CheckpointMethods {
  /**
   * Checkpoint records for rows of one session, each with the conversation of its clock, as many
   * as fit `budget` messages in all (`checkpointsOf`).
   */
  const withConversations = (
    tenant: string,
    sessionId: string,
    rows: CheckpointRow[],
    budget?: number,
  ): Checkpoint[] => {
    if (rows.length === 0) return [];
    // A page: first its rows' sizes, so only the conversations it keeps are read.
    if (budget !== undefined) rows = rows.slice(0, fitting(tenant, sessionId, rows, budget));
    const marks = rows.map((r) => r.message_clock);
    const low = Math.min(...marks);
    const high = Math.max(...marks);
    // One read for the page: every row visible at some clock between the lowest and the highest.
    const candidates = conn.all(
      `SELECT ${MESSAGE_COLUMNS}, added_clock, removed_clock FROM messages
       WHERE tenant_id = ? AND session_id = ? AND added_clock <= ?
       AND (removed_clock IS NULL OR removed_clock > ?) ORDER BY pos`,
      tenant,
      sessionId,
      high,
      low,
    ).map((r) => ({
      message: toMessage(decode.message(r)),
      added_clock: r.added_clock as number,
      removed_clock: r.removed_clock as number | null,
    }));
    return checkpointsOf(rows, candidates, budget);
  };

  /** How many of `rows` a page holds (`checkpointsThatFit`), from the sizes of their messages. */
  const fitting = (
    tenant: string,
    sessionId: string,
    rows: CheckpointRow[],
    budget: number,
  ): number => {
    const marks = rows.map((r) => r.message_clock);
    const sized = conn.all(
      `SELECT added_clock, removed_clock,
       length(content) + coalesce(length(tool_calls), 0) AS bytes FROM messages
       WHERE tenant_id = ? AND session_id = ? AND added_clock <= ?
       AND (removed_clock IS NULL OR removed_clock > ?)`,
      tenant,
      sessionId,
      Math.max(...marks),
      Math.min(...marks),
    ).map((r) => ({
      added_clock: r.added_clock as number,
      removed_clock: r.removed_clock as number | null,
      bytes: Number(r.bytes),
    }));
    return checkpointsThatFit(rows, sized, budget);
  };

  return {
    getCheckpoint(tenant, sessionId, checkpointId) {
      return attempt(() => {
        const row = conn.get(
          `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints
           WHERE tenant_id = ? AND session_id = ? AND checkpoint_id = ?`,
          tenant,
          sessionId,
          checkpointId,
        );
        return row ? withConversations(tenant, sessionId, [decode.checkpoint(row)])[0] : null;
      });
    },

    latestCheckpoint(tenant, sessionId) {
      return attempt(() => {
        const row = conn.get(
          `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE tenant_id = ? AND session_id = ?
           ORDER BY seq DESC LIMIT 1`,
          tenant,
          sessionId,
        );
        return row ? withConversations(tenant, sessionId, [decode.checkpoint(row)])[0] : null;
      });
    },

    listCheckpoints(tenant, sessionId, page) {
      return attempt(() => {
        const { after, limit } = pageWindow(page);
        requireSession(conn, tenant, sessionId);
        const rows = conn.all(
          `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints
           WHERE tenant_id = ? AND session_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
          tenant,
          sessionId,
          after,
          limit,
        ).map(decode.checkpoint);
        const count = conn.get(
          "SELECT count(*) AS n FROM checkpoints WHERE tenant_id = ? AND session_id = ?",
          tenant,
          sessionId,
        )!;
        const paged = toPage(rows, page.per_page, count.n as number, (r) => r);
        return cutPage(
          paged,
          withConversations(tenant, sessionId, paged.items, CHECKPOINT_PAGE_MESSAGES),
        );
      });
    },
  };
}
