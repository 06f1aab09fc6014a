/**
 * What the page remembers: settings and the followed run in `localStorage`, the API key in
 * `sessionStorage` (this tab only).
 */

const KEY = "agentd.playground.";

/** JSON values remembered in `localStorage` under the playground's prefix. */
export const saved = {
  get(name, fallback) {
    try {
      const raw = localStorage.getItem(KEY + name);
      return raw === null ? fallback : JSON.parse(raw);
    } catch {
      return fallback;
    }
  },
  set(name, value) {
    try {
      localStorage.setItem(KEY + name, JSON.stringify(value));
    } catch {
      // Storage may be unavailable (private mode); the page still works without it.
    }
  },
  remove(name) {
    try {
      localStorage.removeItem(KEY + name);
    } catch {
      // As above.
    }
  },
};

/** The API key lives in this tab only (sessionStorage); the tenant is remembered. */
export const connection = {
  key() {
    try {
      return sessionStorage.getItem(KEY + "api_key") || "";
    } catch {
      return "";
    }
  },
  setKey(value) {
    try {
      if (value) sessionStorage.setItem(KEY + "api_key", value);
      else sessionStorage.removeItem(KEY + "api_key");
    } catch {
      // Without storage the key is only in the field.
    }
  },
};
