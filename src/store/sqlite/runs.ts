/**
 * The SQLite store's runs: the start boundary (`createRun`, with what it starts from read by
 * `readStart`), the step and end boundaries (`commitStep`, `finishRun`), reads, and cancel. Each
 * boundary is one write of the group commit.
 */
import type { SQLInputValue } from "node:sqlite";
import type { Message } from "../../api/schemas.ts";
import type { Clock } from "../../clock.ts";
import { pageWindow, toPage } from "../cursor.ts";
import { ConversationChanged, RunFenced, storeErrors } from "../errors.ts";
import { RUN_STATUS_SQL, toCheckpointHead, toRun } from "../records.ts";
import { jsonText, splitSteering } from "../rows.ts";
import type { NewRun, RunMethods, StepCommit } from "../types.ts";
import { attempt, type Connection, type Row } from "./connection.ts";
import {
  advance,
  currentMessages,
  insertMessages,
  messagesAt,
  requireIdle,
  requireNoQueued,
  requireRunIdFree,
  requireSession,
  restore,
} from "./conversation.ts";
import type { GroupCommit } from "./group_commit.ts";
import { CHECKPOINT_COLUMNS, decode, RUN_COLUMNS } from "./rows.ts";

/** The run methods of the SQLite store on `conn`. */
export function sqliteRuns(conn: Connection, commits: GroupCommit, clock: Clock): RunMethods {
  /**
   * Inserts a `running` run row, owned by `run.owner` since `now`: started (attempt 1), or
   * `queued` behind its session's runs (attempt 0, its start pending).
   */
  const insertRun = (
    tenant: string,
    run: Pick<NewRun, "run_id" | "session_id" | "parent_checkpoint_id" | "owner" | "request">,
    queued: boolean,
    now: number,
  ): Row =>
    conn.get(
      `INSERT INTO runs (run_id, tenant_id, session_id, status, parent_checkpoint_id, owner,
       heartbeat_at, created_at, updated_at, request, attempt, start_pending)
       VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${RUN_COLUMNS}`,
      run.run_id,
      tenant,
      run.session_id,
      run.parent_checkpoint_id,
      run.owner,
      now,
      now,
      now,
      jsonText(run.request),
      queued ? 0 : 1,
      queued ? 1 : 0,
    )!;

  /** Refuses a write of `runAttempt` once another attempt owns the run (or it ended). */
  const fence = (runId: string, runAttempt: number | undefined): void => {
    if (runAttempt === undefined) return;
    const owns = conn.get(
      `SELECT 1 AS found FROM runs WHERE run_id = ? AND attempt = ?
       AND status IN ('running', 'cancelled')`,
      runId,
      runAttempt,
    );
    if (!owns) throw new RunFenced(runId, runAttempt);
  };

  /** The step's messages and checkpoint, inside a write transaction (see `commitStep`). */
  const writeStep = (step: StepCommit, now: number): void => {
    const { tenant_id: tenant, session_id: sessionId } = step;
    fence(step.run_id, step.attempt);
    const at = advance(conn, tenant, sessionId, step.messages.length, now);
    if (at === null) throw storeErrors.sessionNotFound(sessionId);
    requireIdle(conn, tenant, sessionId, step.run_id);
    insertMessages(conn, tenant, sessionId, step.messages, at);
    const checkpoint = step.checkpoint;
    if (!checkpoint) return;
    conn.run(
      `INSERT INTO checkpoints (checkpoint_id, tenant_id, session_id, run_id, parent_id, step,
       state, message_clock, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      checkpoint.checkpoint_id,
      tenant,
      sessionId,
      step.run_id,
      checkpoint.parent_id,
      checkpoint.state.step,
      JSON.stringify(checkpoint.state),
      at + step.messages.length,
      now,
    );
    conn.run(
      "UPDATE runs SET checkpoint_id = ?, updated_at = ? WHERE run_id = ? AND tenant_id = ?",
      checkpoint.checkpoint_id,
      now,
      step.run_id,
      tenant,
    );
  };

  return {
    createRun(tenant, run) {
      return commits.durable(() => {
        const now = clock.now();
        const messages = run.messages ?? [];
        const fork = run.fork_checkpoint_id ?? null;
        const row = commits.write(() => {
          // Checked before anything is written, as PostgreSQL's start function does.
          requireNoQueued(conn, tenant, run.session_id, run.run_id);
          if (run.create_session) {
            conn.run(
              `INSERT INTO sessions (tenant_id, session_id, metadata, created_at, updated_at)
               VALUES (?, ?, '{}', ?, ?) ON CONFLICT DO NOTHING`,
              tenant,
              run.session_id,
              now,
              now,
            );
          }
          let at = advance(conn, tenant, run.session_id, (fork ? 1 : 0) + messages.length, now);
          if (at === null) throw storeErrors.sessionNotFound(run.session_id);
          if (run.expect_clock !== undefined && at !== run.expect_clock) {
            throw new ConversationChanged(run.session_id);
          }
          let inserted: Row;
          try {
            inserted = insertRun(tenant, run, false, now);
          } catch (error) {
            if (String((error as Error).message).includes("UNIQUE constraint failed")) {
              // Run ids are global: another tenant's run with this id is a conflict too. Asked
              // only now, so a run id both taken and in a busy session is still a `run_exists`.
              requireRunIdFree(conn, run.run_id);
              // The partial unique index `runs_one_running` is the only other unique key.
              throw storeErrors.sessionBusy(run.session_id);
            }
            throw error;
          }
          if (fork) {
            at = restore(conn, tenant, run.session_id, fork, at + 1);
          }
          insertMessages(conn, tenant, run.session_id, messages, at);
          if (run.link) {
            conn.run(
              `INSERT INTO run_links (tenant_id, session_id, run_id, origin_run_id, note,
               created_at) VALUES (?, ?, ?, ?, ?, ?)`,
              tenant,
              run.session_id,
              run.run_id,
              run.link.origin_run_id,
              jsonText(run.link.note),
              now,
            );
          }
          return inserted;
        });
        return toRun(decode.run(row));
      });
    },

    readStart(tenant, sessionId, checkpointId) {
      return attempt(() => {
        // The clock is read first: a change another process commits between these reads moves
        // it past the value returned, so `createRun` refuses the plan (`ConversationChanged`).
        const session = conn.get(
          "SELECT message_clock FROM sessions WHERE tenant_id = ? AND session_id = ?",
          tenant,
          sessionId,
        );
        if (!session) return { clock: null, checkpoint: null, messages: [] };
        const row = checkpointId
          ? conn.get(
            `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints
             WHERE tenant_id = ? AND session_id = ? AND checkpoint_id = ?`,
            tenant,
            sessionId,
            checkpointId,
          )
          : conn.get(
            `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE tenant_id = ? AND session_id = ?
             ORDER BY seq DESC LIMIT 1`,
            tenant,
            sessionId,
          );
        const checkpoint = row ? decode.checkpoint(row) : null;
        let messages: Message[];
        if (checkpointId) {
          messages = checkpoint
            ? messagesAt(conn, tenant, sessionId, checkpoint.message_clock)
            : [];
        } else {
          messages = currentMessages(conn, tenant, sessionId);
        }
        return {
          clock: session.message_clock as number,
          checkpoint: checkpoint ? toCheckpointHead(checkpoint) : null,
          messages,
        };
      });
    },

    getRun(tenant, runId) {
      return attempt(() => {
        const row = conn.get(
          `SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = ? AND run_id = ?`,
          tenant,
          runId,
        );
        return row ? toRun(decode.run(row)) : null;
      });
    },

    listRuns(tenant, sessionId, filter, page) {
      return attempt(() => {
        const { after, limit } = pageWindow(page);
        requireSession(conn, tenant, sessionId);
        const where = ["tenant_id = ?", "session_id = ?"];
        const params: SQLInputValue[] = [tenant, sessionId];
        // Lists travel as one JSON parameter, so the statement text does not depend on their
        // length.
        const lists: [string, string[] | undefined][] = [
          ["run_id", filter.ids],
          ["session_id", filter.session_ids],
          [RUN_STATUS_SQL, filter.statuses],
        ];
        for (const [column, values] of lists) {
          if (values && values.length > 0) {
            where.push(`${column} IN (SELECT value FROM json_each(?))`);
            params.push(JSON.stringify(values));
          }
        }
        const bounds: [string, number | undefined][] = [
          ["created_at <", filter.created_before],
          ["created_at >", filter.created_after],
          ["updated_at <", filter.updated_before],
          ["updated_at >", filter.updated_after],
        ];
        for (const [condition, value] of bounds) {
          if (value !== undefined) {
            where.push(`${condition} ?`);
            params.push(value);
          }
        }
        const clause = where.join(" AND ");
        const rows = conn.all(
          `SELECT ${RUN_COLUMNS} FROM runs WHERE ${clause} AND seq > ? ORDER BY seq LIMIT ?`,
          ...params,
          after,
          limit,
        ).map(decode.run);
        const count = conn.get(`SELECT count(*) AS n FROM runs WHERE ${clause}`, ...params)!;
        return toPage(rows, page.per_page, count.n as number, toRun);
      });
    },

    commitStep(step) {
      return commits.durable(() => {
        commits.write(() => writeStep(step, clock.now()));
      });
    },

    finishRun(runId, outcome, last, runAttempt) {
      return commits.durable(() => {
        const now = clock.now();
        const row = commits.write(() => {
          fence(runId, runAttempt);
          if (last) writeStep(last, now);
          return conn.get(
            `UPDATE runs SET status = ?, result = ?, interrupt_payload = ?, error = ?,
             updated_at = ? WHERE run_id = ? AND status = 'running' RETURNING ${RUN_COLUMNS}`,
            outcome.status,
            jsonText(outcome.result),
            jsonText(outcome.interrupt_payload),
            jsonText(outcome.error),
            now,
            runId,
          ) ?? conn.get(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`, runId);
        });
        if (!row) throw storeErrors.runNotFound(runId);
        return toRun(decode.run(row));
      });
    },

    saveModelReport(runId, report, runAttempt) {
      return commits.durable(() => {
        commits.write(() =>
          conn.run(
            "UPDATE runs SET model_report = ? WHERE run_id = ? AND (? IS NULL OR attempt = ?)",
            jsonText(report),
            runId,
            runAttempt ?? null,
            runAttempt ?? null,
          )
        );
      });
    },

    steerRun(tenant, runId, messages) {
      return commits.durable(() =>
        commits.write(() => {
          const row = conn.get(
            `SELECT steering FROM runs WHERE tenant_id = ? AND run_id = ? AND status = 'running'`,
            tenant,
            runId,
          );
          if (!row) return false;
          const waiting = row.steering ? JSON.parse(row.steering as string) as Message[] : [];
          conn.run(
            "UPDATE runs SET steering = ? WHERE run_id = ?",
            JSON.stringify([...waiting, ...messages]),
            runId,
          );
          return true;
        })
      );
    },

    takeSteering(step) {
      return commits.durable(() =>
        commits.write(() => {
          fence(step.run_id, step.attempt);
          const row = conn.get("SELECT steering FROM runs WHERE run_id = ?", step.run_id);
          if (!row?.steering) return [];
          const messages = JSON.parse(row.steering as string) as Message[];
          writeStep({ ...step, messages, checkpoint: null }, clock.now());
          conn.run("UPDATE runs SET steering = NULL WHERE run_id = ?", step.run_id);
          return messages;
        })
      );
    },

    reclaimSteering(runId, messageIds) {
      return commits.durable(() =>
        commits.write(() => {
          const row = conn.get(
            "SELECT steering FROM runs WHERE run_id = ? AND status <> 'running'",
            runId,
          );
          if (!row?.steering) return [];
          const [taken, left] = splitSteering(row.steering as string, messageIds);
          if (taken.length > 0) {
            conn.run("UPDATE runs SET steering = ? WHERE run_id = ?", left, runId);
          }
          return taken;
        })
      );
    },

    queueBehind(tenant, run) {
      return commits.durable(() => {
        const now = clock.now();
        const row = commits.write(() => {
          requireSession(conn, tenant, run.session_id);
          requireRunIdFree(conn, run.run_id);
          return insertRun(tenant, { ...run, parent_checkpoint_id: null }, true, now);
        });
        return toRun(decode.run(row));
      });
    },

    beginQueued(start) {
      return commits.durable(() => {
        commits.write(() => {
          const now = clock.now();
          writeStep({ ...start, checkpoint: null }, now);
          conn.run(
            `UPDATE runs SET parent_checkpoint_id = ?, request = ?, start_pending = 0,
             updated_at = ? WHERE run_id = ?`,
            start.parent_checkpoint_id,
            jsonText(start.request),
            now,
            start.run_id,
          );
        });
      });
    },

    cancelRun(tenant, runId) {
      return commits.durable(() => {
        const row = commits.write(() =>
          conn.get(
            `UPDATE runs SET status = 'cancelled', updated_at = ?
             WHERE tenant_id = ? AND run_id = ? AND status = 'running' RETURNING ${RUN_COLUMNS}`,
            clock.now(),
            tenant,
            runId,
          ) ?? conn.get(
            `SELECT ${RUN_COLUMNS} FROM runs WHERE tenant_id = ? AND run_id = ?`,
            tenant,
            runId,
          )
        );
        return row ? toRun(decode.run(row)) : null;
      });
    },
  };
}
