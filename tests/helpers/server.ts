/** Moved to the test kit: import from `tests/_kit/mod.ts`. Kept until every test has migrated. */
export * from "../_kit/server.ts";
