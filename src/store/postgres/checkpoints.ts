/**
 * The PostgreSQL store's checkpoints, read back as records with the conversation of their moment
 * (every message row visible at the checkpoint's clock). A page reads its conversations at once.
 */
import type postgres from "postgres";
import type { Checkpoint } from "../../api/schemas.ts";
import { cutPage, pageWindow, toPage } from "../cursor.ts";
import {
  CHECKPOINT_PAGE_MESSAGES,
  checkpointsOf,
  checkpointsThatFit,
  toMessage,
} from "../records.ts";
import type { DriverRow } from "../rows.ts";
import type { CheckpointMethods } from "../types.ts";
import { requireSession } from "./conversation.ts";
import { decode } from "./rows.ts";

/** The checkpoint methods of the PostgreSQL store on the pool `sql`. */
export function postgresCheckpoints(sql: postgres.Sql): CheckpointMethods {
  /**
   * Checkpoint records for rows of one session, each with the conversation of its clock, as many
   * as fit `budget` messages in all (`checkpointsOf`).
   */
  const withConversations = async (
    tenant: string,
    sessionId: string,
    rows: DriverRow[],
    budget?: number,
  ): Promise<Checkpoint[]> => {
    if (rows.length === 0) return [];
    let cps = rows.map(decode.checkpoint);
    // A page: first its rows' sizes, so only the conversations it keeps are read.
    if (budget !== undefined) {
      const marks = cps.map((r) => r.message_clock);
      const sized = (await sql`SELECT added_clock, removed_clock,
        length(content::text) + coalesce(length(tool_calls::text), 0) AS bytes FROM messages
        WHERE tenant_id = ${tenant} AND session_id = ${sessionId}
        AND added_clock <= ${Math.max(...marks)}
        AND (removed_clock IS NULL OR removed_clock > ${Math.min(...marks)})`).map((r) => ({
        added_clock: Number(r.added_clock),
        removed_clock: r.removed_clock === null ? null : Number(r.removed_clock),
        bytes: Number(r.bytes),
      }));
      cps = cps.slice(0, checkpointsThatFit(cps, sized, budget));
    }
    const marks = cps.map((r) => r.message_clock);
    const low = Math.min(...marks);
    const high = Math.max(...marks);
    // One read for the page: every row visible at some clock between the lowest and the highest.
    const candidates = (await sql`SELECT * FROM messages WHERE tenant_id = ${tenant}
      AND session_id = ${sessionId} AND added_clock <= ${high}
      AND (removed_clock IS NULL OR removed_clock > ${low}) ORDER BY pos`).map((r) => ({
      message: toMessage(decode.message(r)),
      added_clock: Number(r.added_clock),
      removed_clock: r.removed_clock === null ? null : Number(r.removed_clock),
    }));
    return checkpointsOf(cps, candidates, budget);
  };

  return {
    async getCheckpoint(tenant, sessionId, checkpointId) {
      const rows = await sql`SELECT * FROM checkpoints WHERE tenant_id = ${tenant}
        AND session_id = ${sessionId} AND checkpoint_id = ${checkpointId}`;
      return (await withConversations(tenant, sessionId, rows))[0] ?? null;
    },

    async latestCheckpoint(tenant, sessionId) {
      const rows = await sql`SELECT * FROM checkpoints WHERE tenant_id = ${tenant}
        AND session_id = ${sessionId} ORDER BY seq DESC LIMIT 1`;
      return (await withConversations(tenant, sessionId, rows))[0] ?? null;
    },

    async listCheckpoints(tenant, sessionId, page) {
      const { after, limit } = pageWindow(page);
      await requireSession(sql, tenant, sessionId);
      const rows = await sql`SELECT * FROM checkpoints WHERE tenant_id = ${tenant}
        AND session_id = ${sessionId} AND seq > ${after} ORDER BY seq LIMIT ${limit}`;
      const [{ n }] = await sql`SELECT count(*) AS n FROM checkpoints
        WHERE tenant_id = ${tenant} AND session_id = ${sessionId}`;
      const seq = (r: DriverRow) => Number(r.seq);
      const paged = toPage([...rows], page.per_page, Number(n), (r) => r, seq);
      const items = await withConversations(
        tenant,
        sessionId,
        paged.items,
        CHECKPOINT_PAGE_MESSAGES,
      );
      return cutPage(paged, items, seq);
    },
  };
}
