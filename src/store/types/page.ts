/**
 * Paging of the Store's list calls (see ../types.ts).
 */
/** Paging of a list call: page size and the opaque cursor from a previous page. */
export interface PageQuery {
  /** Largest number of records on the page. */
  per_page: number;
  /** `next_page` of the previous page; one the store cannot decode is `invalid_cursor`. */
  page?: string | null;
}
