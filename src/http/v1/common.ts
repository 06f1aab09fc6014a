/** Small helpers the `/v1` route modules share. */
import type { Context } from "hono";
import type { AppEnv } from "../kit/env.ts";
import { errors } from "../../errors.ts";
import type { PageQuery } from "../../store/types.ts";
import { perPage, queryValues, rejectUnknownQuery, single } from "../kit/validation.ts";

/** The route context type of the app. */
export type Ctx = Context<AppEnv>;

/** Reads the paging parameters, rejecting any query parameter not in `extra` or paging. */
export function pageQuery(
  c: Ctx,
  extra: readonly string[] = [],
): { page: PageQuery; query: Map<string, string[]> } {
  const query = queryValues(c);
  rejectUnknownQuery(query, ["per_page", "page", ...extra]);
  const page = single(query, "page");
  return { page: { per_page: perPage(single(query, "per_page")), page: page || null }, query };
}

/** Throws 404001 unless the tenant has the session. */
export async function requireSession(c: Ctx, sessionId: string): Promise<void> {
  const { store } = c.get("services");
  if (!(await store.getSession(c.get("tenant"), sessionId))) {
    throw errors.sessionNotFound(sessionId);
  }
}
