/**
 * Group commit: the writes one turn of the event loop issues share one transaction. At
 * concurrency, runs' boundaries touch the same pages (the tables' last leaves), and one commit
 * writes them and takes the locks once. A write that throws is undone alone: the first write of a
 * group, alone in the transaction so far, by rolling the transaction back (the group ends with
 * it; a later write opens another), each later one by its own savepoint. The transaction commits
 * at the next turn, and a write's promise resolves once that commit is done.
 */
import { setImmediate } from "node:timers";
import type { Connection } from "./connection.ts";

/** The group commit of one connection. */
export class GroupCommit {
  readonly #conn: Connection;
  /** The open group transaction of this turn of the event loop (see `write`). */
  #group: PromiseWithResolvers<void> | null = null;

  /** Group commits on `conn`, which must not run transactions of its own besides. */
  constructor(conn: Connection) {
    this.#conn = conn;
  }

  /**
   * Runs `body` as a write that holds the database's write lock from its start (`BEGIN
   * IMMEDIATE`: no other process can slip in between a check and the write), in this turn's
   * group. `durable` makes a method's promise wait for the group's commit.
   */
  write<T>(body: () => T): T {
    if (!this.#group) return this.#firstWrite(body);
    this.#conn.run("SAVEPOINT w");
    try {
      const result = body();
      this.#conn.run("RELEASE w");
      return result;
    } catch (error) {
      this.#conn.run("ROLLBACK TO w");
      this.#conn.run("RELEASE w");
      throw error;
    }
  }

  /**
   * Runs a write method's synchronous `body` as a promise that resolves once what it wrote is
   * committed (the group it joined), and rejects at once when it throws.
   */
  durable<T>(body: () => T): Promise<T> {
    let value: T;
    try {
      value = body();
    } catch (error) {
      return Promise.reject(error);
    }
    const group = this.#group;
    return group ? group.promise.then(() => value) : Promise.resolve(value);
  }

  /** Commits the open group now, if any (the store is closing). */
  flush(): void {
    if (this.#group && this.#conn.db.isOpen) this.#commitGroup(this.#group);
  }

  /** The first write of a group: it opens the transaction, which holds nothing else yet. */
  #firstWrite<T>(body: () => T): T {
    const group = this.#openGroup();
    try {
      return body();
    } catch (error) {
      this.#group = null;
      group.resolve();
      if (this.#conn.db.isOpen && this.#conn.db.isTransaction) this.#conn.run("ROLLBACK");
      throw error;
    }
  }

  #openGroup(): PromiseWithResolvers<void> {
    this.#conn.run("BEGIN IMMEDIATE");
    const group = Promise.withResolvers<void>();
    group.promise.catch(() => {});
    this.#group = group;
    setImmediate(() => this.#commitGroup(group));
    return group;
  }

  /** Commits the open group (once: `flush` may have got there first). */
  #commitGroup(group: PromiseWithResolvers<void>): void {
    if (this.#group !== group) return;
    this.#group = null;
    try {
      this.#conn.run("COMMIT");
      group.resolve();
    } catch (error) {
      if (this.#conn.db.isOpen && this.#conn.db.isTransaction) this.#conn.run("ROLLBACK");
      group.reject(error);
    }
  }
}
