/**
 * The Python side of a Python tool call, kept as a string and passed with `python3 -c`, so
 * `deno compile` needs no extra file and nothing is written to disk.
 *
 * Invocation: `python3 -c RUNNER <module path> <function name>`, in its own session/process group.
 * Protocol (JSON lines; the runner's stdout is reserved for it):
 * - in (stdin): one line `{ args, context, tenant_id, session_id, run_id, tool_call_id }`; stdin
 *   then stays open, and its end means the server is gone;
 * - out (stdout): any number of `{"type":"emit","name":...,"value":...}`, then one
 *   `{"type":"result","value":...}` or `{"type":"error","error":"..."}`; then the runner exits.
 */
import { WITH_STATE_KEY, WITH_STATE_TAG } from "./library.ts";

/** The runner script (Python 3.8+). */
export const PYTHON_RUNNER_SOURCE = String.raw`
import sys
# With -c, sys.path[0] is the working directory: a json.py there must not shadow the stdlib.
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
# Only what every call needs: asyncio and traceback cost ~30 ms of startup, imported when used.
import importlib.util, json, os, signal, threading

MARKER_KEY = ${JSON.stringify(WITH_STATE_KEY)}
MARKER_TAG = ${JSON.stringify(WITH_STATE_TAG)}

# The protocol keeps the original stdout; fd 1 then points at stderr, so print(), C extensions and
# child processes of the tool cannot write into the protocol stream. (os.dup gives a
# non-inheritable fd, so the tool's children do not get it either.)
_proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
os.dup2(2, 1)
sys.stdout = sys.stderr
_lock = threading.Lock()
_done = False


def _send(message):
    line = json.dumps(message, allow_nan=False, ensure_ascii=False)
    with _lock:
        if _done:
            return
        _proto.write(line + "\n")
        _proto.flush()


def _finish(message):
    global _done
    try:
        _send(message)
    except (TypeError, ValueError) as err:
        _send({"type": "error", "error": "result is not JSON-serializable: %s" % err})
    with _lock:
        _done = True
    sys.stderr.flush()
    # No waiting for threads the tool left running: the call is over.
    os._exit(0)


def _watch_server():
    # EOF on stdin: the server closed it or died. Take the tool's whole process group down.
    # (os.read, not sys.stdin: a daemon thread blocked in a buffered reader holds its lock and
    # makes interpreter shutdown abort when the tool calls sys.exit.)
    try:
        while os.read(0, 65536):
            pass
    except OSError:
        pass
    if os.getpgrp() == os.getpid():
        os.killpg(0, signal.SIGKILL)
    os._exit(1)


class Context:
    """The ctx a Python tool function receives as its second argument."""

    def __init__(self, request):
        self.context = request.get("context")
        self.tenant_id = request.get("tenant_id")
        self.session_id = request.get("session_id")
        self.run_id = request.get("run_id")
        self.tool_call_id = request.get("tool_call_id")

    def emit(self, name, value):
        """Sends a live CUSTOM event to the run's clients (not persisted); value must be JSON."""
        if not isinstance(name, str) or not name:
            raise TypeError("emit: name must be a non-empty string")
        # Raises here, in the tool, when value is not JSON.
        _send({"type": "emit", "name": name, "value": value})

    def with_state(self, result, context=None, patch=None):
        """Returns result for the model plus a state update: a whole new context, or a patch."""
        if (context is None) == (patch is None):
            raise ValueError("with_state: give exactly one of context= or patch=")
        state = {"context": context} if context is not None else {"patch": patch}
        return {MARKER_KEY: MARKER_TAG, "result": result, "state": state}


def _run_awaitable(awaitable):
    import asyncio

    async def wait():
        return await awaitable

    return asyncio.run(wait())


def main():
    module_path, function_name = sys.argv[1], sys.argv[2]
    request = json.loads(sys.stdin.buffer.readline().decode("utf-8"))
    sys.stdin = open(os.devnull)
    threading.Thread(target=_watch_server, daemon=True).start()
    ctx = Context(request)
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(module_path)))
        spec = importlib.util.spec_from_file_location("agentd_tool", module_path)
        if spec is None or spec.loader is None:
            raise ImportError("cannot load %s as a Python module" % module_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        fn = getattr(module, function_name, None)
        if fn is None:
            _finish({"type": "error", "error": "the module has no function named '%s'" % function_name})
        if not callable(fn):
            _finish({"type": "error", "error": "'%s' is not callable" % function_name})
        value = fn(request.get("args") or {}, ctx)
        if hasattr(value, "__await__"):
            value = _run_awaitable(value)
    except Exception as err:
        import traceback

        traceback.print_exc()
        _finish({"type": "error", "error": "%s: %s" % (type(err).__name__, err)})
    _finish({"type": "result", "value": value})


main()
`;
