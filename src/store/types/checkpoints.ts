/**
 * The Store's checkpoints: records with the conversation of their moment (see ../types.ts).
 */
import type { Checkpoint, CheckpointState, Page } from "../../api/schemas.ts";
import type { PageQuery } from "./page.ts";

/** The state a checkpoint holds besides its conversation. */
export type CheckpointData = Omit<CheckpointState, "messages">;

/** A checkpoint without its conversation. */
export interface CheckpointHead {
  /** The checkpoint's id. */
  checkpoint_id: string;
  /** The run that wrote it (null for one written outside a run). */
  run_id: string | null;
  /** The checkpoint before it in the session. */
  parent_id: string | null;
  /** What it saves. */
  state: CheckpointData;
}

/** The checkpoint methods of a `Store`. */
export interface CheckpointMethods {
  /** One checkpoint of the session, or null. */
  getCheckpoint(
    tenant: string,
    sessionId: string,
    checkpointId: string,
  ): Promise<Checkpoint | null>;
  /** The most recently created checkpoint of the session. */
  latestCheckpoint(tenant: string, sessionId: string): Promise<Checkpoint | null>;
  /** A page of the session's checkpoints, oldest first. */
  listCheckpoints(tenant: string, sessionId: string, page: PageQuery): Promise<Page<Checkpoint>>;
}
