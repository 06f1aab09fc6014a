"""The Python side of a Python tool's sandbox process (agentd, src/tools/host/).

Embedded in agentd as text (sources.ts) and passed with `python3 -c`, so `deno compile` needs no
extra file and nothing is written to disk.

Invocation: `python3 -c RUNNER <config>`, in its own session/process group (and in the OS sandbox
unless the tool opts out), where config is the JSON
`{ module, function, limits: { memory, cpu_seconds, processes, result_bytes, emits, emit_bytes },
with_state: { key, tag } }` (`memory` in bytes; `processes` null when not limited). The runner
lowers its own resource limits first, loads the module, says `ready`, then reads one request line
`{ args, context, tenant_id, session_id, run_id, tool_call_id }` on stdin; stdin then stays open,
and its end means the server is gone. Protocol lines (protocol.ts) go to the original stdout,
which the runner keeps for itself. Python 3.8+.
"""
import sys
# With -c, sys.path[0] is the working directory: a json.py there must not shadow the stdlib.
if sys.path and sys.path[0] in ("", "."):
    del sys.path[0]
# Only what every call needs: asyncio and traceback cost ~30 ms of startup, imported when used.
import importlib.util, json, os, resource, signal, threading

CONFIG = json.loads(sys.argv[1])
LIMITS = CONFIG["limits"]
# The marker of a "result plus state update" value (library.ts: WITH_STATE_KEY / WITH_STATE_TAG).
MARKER_KEY = CONFIG["with_state"]["key"]
MARKER_TAG = CONFIG["with_state"]["tag"]


def _lower(kind, value):
    # Soft and hard: the tool cannot raise them again.
    try:
        resource.setrlimit(kind, (value, value))
    except (ValueError, OSError):
        pass  # already lower (or not supported here)


_lower(resource.RLIMIT_DATA, LIMITS["memory"])
_lower(resource.RLIMIT_CPU, LIMITS["cpu_seconds"])
_lower(resource.RLIMIT_CORE, 0)
if LIMITS.get("processes"):
    _lower(resource.RLIMIT_NPROC, LIMITS["processes"])

# The protocol keeps the original stdout; fd 1 then points at stderr, so print(), C extensions and
# child processes of the tool cannot write into the protocol stream. (os.dup gives a
# non-inheritable fd, so the tool's children do not get it either.)
_proto = os.fdopen(os.dup(1), "w", encoding="utf-8", newline="\n")
os.dup2(2, 1)
sys.stdout = sys.stderr
_lock = threading.Lock()
_done = False
_emits = 0
_emit_bytes = 0


def _send_line(line):
    with _lock:
        if _done:
            return
        _proto.write("\n\x1e" + line + "\n")
        _proto.flush()


def _finish(message):
    global _done
    _send_line(json.dumps(message, allow_nan=False, ensure_ascii=False))
    with _lock:
        _done = True
    sys.stderr.flush()
    # No waiting for threads the tool left running: the call is over.
    os._exit(0)


def _error(text, stage):
    _finish({"type": "error", "error": text, "stage": stage})


def _result(value):
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as err:
        _error("result is not JSON-serializable: %s" % err, "result")
    size = len(text.encode("utf-8"))
    if size > LIMITS["result_bytes"]:
        _error(
            "the result is %d bytes of JSON, more than limits.result_bytes (%d)"
            % (size, LIMITS["result_bytes"]),
            "result",
        )
    _send_line('{"type": "result", "value": ' + text + "}")
    _finish_quietly()


def _finish_quietly():
    global _done
    with _lock:
        _done = True
    sys.stderr.flush()
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
        global _emits, _emit_bytes
        if not isinstance(name, str) or not name:
            raise TypeError("emit: name must be a non-empty string")
        # Raises here, in the tool, when value is not JSON.
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
        size = len(text.encode("utf-8"))
        with _lock:
            if _emits + 1 > LIMITS["emits"]:
                raise RuntimeError(
                    "emit: this call has sent its %d live events (limits.emits)" % LIMITS["emits"]
                )
            if _emit_bytes + size > LIMITS["emit_bytes"]:
                raise RuntimeError(
                    "emit: this call's live events would exceed %d bytes (limits.emit_bytes)"
                    % LIMITS["emit_bytes"]
                )
            _emits += 1
            _emit_bytes += size
        _send_line('{"type": "emit", "name": ' + json.dumps(name) + ', "value": ' + text + "}")

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


def _report(err, stage):
    import traceback

    traceback.print_exc()
    _error("%s: %s" % (type(err).__name__, err), stage)


def main():
    module_path, function_name = CONFIG["module"], CONFIG["function"]
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(module_path)))
        spec = importlib.util.spec_from_file_location("agentd_tool", module_path)
        if spec is None or spec.loader is None:
            raise ImportError("cannot load %s as a Python module" % module_path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    except BaseException as err:
        _report(err, "load")
    fn = getattr(module, function_name, None)
    if fn is None:
        _error("the module has no function named '%s'" % function_name, "export")
    if not callable(fn):
        _error("'%s' is not callable" % function_name, "export")
    _send_line('{"type": "ready"}')

    line = sys.stdin.buffer.readline()
    if not line:
        os._exit(1)  # the server is gone
    request = json.loads(line.decode("utf-8"))
    sys.stdin = open(os.devnull)
    threading.Thread(target=_watch_server, daemon=True).start()
    ctx = Context(request)
    try:
        value = fn(request.get("args") or {}, ctx)
        if hasattr(value, "__await__"):
            value = _run_awaitable(value)
    except Exception as err:
        _report(err, "call")
    _result(value)


main()
