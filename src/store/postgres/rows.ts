/** How the PostgreSQL store reads rows: postgres.js hands JSON columns back already decoded. */
import { rowDecoders } from "../rows.ts";

/** The decoders of PostgreSQL rows. */
export const decode = rowDecoders((column) => column);
