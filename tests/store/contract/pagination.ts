/** Pagination: a `page` cursor the store did not hand out is refused on every list. */
import assert from "node:assert/strict";
import { encodeCursor } from "../../../src/store/cursor.ts";
import { assertError } from "../../_kit/mod.ts";
import { type Contract, newTenant, STORE } from "./helpers.ts";

/** Registers the pagination steps of the store contract. */
export async function paginationSteps(t: Deno.TestContext, c: Contract): Promise<void> {
  const { store } = c;

  await t.step("pagination: a cursor that does not decode is 422 on `page`", async () => {
    const tenant = newTenant();
    await store.createSession(tenant, { session_id: "s" });
    const bad = [
      "!!!",
      "not base64 at all",
      "abc",
      btoa("v2:5").replace(/=+$/, ""),
      btoa("v1:x").replace(/=+$/, ""),
      btoa("v1:-1").replace(/=+$/, ""),
      "",
    ];
    for (const page of bad) {
      const error = await assertError(
        store.listSessions(tenant, { per_page: 10, page }),
        422000,
        STORE,
      );
      assert.equal(error.fields?.[0].field, "page");
      assert.equal(error.fields?.[0].errors[0].code, "cursor");
    }
    await assertError(store.listMessages(tenant, "s", { per_page: 10, page: "%%" }), 422000, STORE);
    await assertError(store.listRuns(tenant, "s", {}, { per_page: 10, page: "%%" }), 422000, STORE);
    await assertError(
      store.listCheckpoints(tenant, "s", { per_page: 10, page: "%%" }),
      422000,
      STORE,
    );
    // A well-formed cursor past the end is simply an empty page.
    const past = await store.listSessions(tenant, { per_page: 10, page: encodeCursor(2 ** 50) });
    assert.deepEqual(past, { items: [], count: 1, next_page: null });
  });
}
