/**
 * RFC 6902 JSON Patch, applied to the agent state the page shows (`state_delta` events).
 */

function pointer(path) {
  if (path === "") return [];
  return path.split("/").slice(1).map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function getAt(doc, tokens) {
  let cur = doc;
  for (const t of tokens) {
    if (cur === null || typeof cur !== "object") return undefined;
    cur = Array.isArray(cur) ? cur[t === "-" ? cur.length : Number(t)] : cur[t];
  }
  return cur;
}

function putAt(doc, tokens, value, insert) {
  if (tokens.length === 0) return value;
  const parent = getAt(doc, tokens.slice(0, -1));
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) {
    const i = key === "-" ? parent.length : Number(key);
    if (insert) parent.splice(i, 0, value);
    else parent[i] = value;
  } else if (parent !== null && typeof parent === "object") {
    parent[key] = value;
  }
  return doc;
}

function removeAt(doc, tokens) {
  if (tokens.length === 0) return null;
  const parent = getAt(doc, tokens.slice(0, -1));
  const key = tokens[tokens.length - 1];
  if (Array.isArray(parent)) parent.splice(Number(key), 1);
  else if (parent !== null && typeof parent === "object") delete parent[key];
  return doc;
}

const clone = (v) => v === undefined ? undefined : JSON.parse(JSON.stringify(v));

/** Applies RFC 6902 operations to a copy of the context (the server already checked them). */
export function applyPatch(doc, ops) {
  let out = clone(doc === null || doc === undefined ? {} : doc);
  for (const op of ops) {
    const path = pointer(op.path);
    if (op.op === "add") out = putAt(out, path, clone(op.value), true);
    else if (op.op === "replace") out = putAt(out, path, clone(op.value), false);
    else if (op.op === "remove") out = removeAt(out, path);
    else if (op.op === "copy") out = putAt(out, path, clone(getAt(out, pointer(op.from))), true);
    else if (op.op === "move") {
      const value = getAt(out, pointer(op.from));
      out = putAt(removeAt(out, pointer(op.from)), path, value, true);
    }
  }
  return out;
}
