/**
 * The code that runs inside the tool processes, embedded in agentd as text: the files are what
 * fmt, lint and the type checker see (js_host.ts; python_runner.py is compiled by a test), and a
 * static text import is what `deno compile` embeds, so a compiled agentd reads no file of its own
 * to start a tool.
 */
import JS_HOST_TEXT from "./js_host.ts" with { type: "text" };
import PYTHON_RUNNER_TEXT from "./python_runner.py" with { type: "text" };

/** The JavaScript tool process's bootstrap (TypeScript; it must not import anything). */
export const JS_HOST_SOURCE: string = JS_HOST_TEXT;

/**
 * The bootstrap as a `data:` URL, the main module of every JavaScript tool process (run by the
 * `deno` CLI, which transpiles it).
 */
export const JS_HOST_URL: string = `data:application/typescript;base64,${
  btoa(String.fromCharCode(...new TextEncoder().encode(JS_HOST_SOURCE)))
}`;

/** The Python runner script (Python 3.8+), passed with `python3 -c`. */
export const PYTHON_RUNNER_SOURCE: string = PYTHON_RUNNER_TEXT;
