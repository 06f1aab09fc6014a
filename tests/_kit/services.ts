/**
 * Where the tests find PostgreSQL and Redis. `.ci/run` sets both variables; locally a suite that
 * needs one skips only when its variable is unset, and says so.
 */
import postgres from "postgres";

/** PostgreSQL URL for tests (`AGENTD_TEST_POSTGRES_URL`), or undefined. */
export const testPostgresUrl: string | undefined = Deno.env.get("AGENTD_TEST_POSTGRES_URL");

/** Redis URL for tests (`AGENTD_TEST_REDIS_URL`), or undefined. */
export const testRedisUrl: string | undefined = Deno.env.get("AGENTD_TEST_REDIS_URL");

/** A name unique to this test run, for a PostgreSQL schema or a Redis key prefix. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${crypto.randomUUID().slice(0, 8)}`;
}

/** Logs once why a suite is skipped. */
export function skipNotice(suite: string, variable: string): void {
  console.warn(`skipping ${suite}: ${variable} is not set (CI sets it)`);
}

/** Drops a test's PostgreSQL schema (nothing when PostgreSQL is not configured). */
export async function dropSchema(schema: string): Promise<void> {
  if (!testPostgresUrl) return;
  const sql = postgres(testPostgresUrl, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await sql.end();
  }
}
