/**
 * Small DOM and formatting helpers shared by every part of the page.
 */

/**
 * The element with this id. Typed `any`: the page knows which kind of element each id is.
 * @type {(id: string) => any}
 */
export const $ = (id) => document.getElementById(id);

/** Creates an element; props: class, text, dataset, on<event>, attributes. */
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "text") el.textContent = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** The first characters of a long id, for labels. */
export function short(id) {
  return id && id.length > 12 ? id.slice(0, 8) : id || "";
}

/** The time of an RFC 3339 timestamp (now without one) as HH:MM:SS. */
export function clock(iso) {
  const d = iso ? new Date(iso) : new Date();
  return d.toLocaleTimeString([], {
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
    hour12: false,
  });
}

/** A value as indented JSON (text as it is). */
export function pretty(value) {
  if (value === undefined) return "";
  if (typeof value === "string") return value;
  return JSON.stringify(value, null, 2);
}

/** A value as one line of JSON (text as it is). */
export function compact(value) {
  if (typeof value === "string") return value;
  const text = JSON.stringify(value);
  return text === undefined ? "" : text;
}
