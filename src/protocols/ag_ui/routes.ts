/**
 * The AG-UI run endpoint, `POST <base>/run`: reads and maps the request, starts an attached native
 * run through the run service (same sessions, run records, cancellation and re-attach as `/v1`),
 * and streams the run's events through the AG-UI encoder.
 */
import { Hono } from "hono";
import type { AppEnv } from "../../http/app.ts";
import { sseResponse } from "../../http/sse.ts";
import { readJson } from "../../http/validation.ts";
import { bodyLimit, keepaliveMs } from "../../http/settings.ts";
import type { Store } from "../../store/types.ts";
import { agUiFrames } from "./encoder.ts";
import { NEW_THREAD, parseRunInput, relabel, type ThreadView, toRunRequest } from "./input.ts";
import { openInterrupts } from "./interrupts.ts";

/** Routes of the AG-UI add-on, mounted under its base path (`/ag-ui` by default). */
export function agUiRoutes(): Hono<AppEnv> {
  const r = new Hono<AppEnv>();

  r.post("/run", async (c) => {
    const { store, runs } = c.get("services");
    const tenant = c.get("tenant");
    // Everything that can be refused is refused here, as a JSON error before any stream starts.
    const input = parseRunInput(await readJson(c, bodyLimit(c)));
    const thread = input.threadId ? await loadThread(store, tenant, input.threadId) : NEW_THREAD;
    const mapped = toRunRequest(input, thread);
    let started;
    try {
      started = await runs.start(tenant, mapped.request, true);
    } catch (err) {
      throw relabel(err, mapped.field);
    }
    const frames = agUiFrames(started.events!, { clientMessageIds: mapped.clientMessageIds });
    return sseResponse(frames, {
      keepaliveMs: keepaliveMs(c),
      // As on the native attached stream: a client that goes away cancels its run.
      onClientGone: () => {
        runs.cancel(tenant, started.run_id).catch(() => {});
      },
      headers: { "x-run-id": started.run_id, "x-session-id": started.session_id },
    });
  });

  return r;
}

/**
 * What the mapping needs to know about a thread: the ids of the messages its session holds and
 * what its last stopped run waits for. A session that does not exist yet is an empty thread.
 */
export async function loadThread(
  store: Store,
  tenant: string,
  sessionId: string,
): Promise<ThreadView> {
  if (!(await store.getSession(tenant, sessionId))) return NEW_THREAD;
  const [messages, checkpoint] = await Promise.all([
    store.allMessages(tenant, sessionId),
    store.latestCheckpoint(tenant, sessionId),
  ]);
  // The run that wrote the latest checkpoint is the one whose pending calls the engine resumes.
  const run = checkpoint?.run_id ? await store.getRun(tenant, checkpoint.run_id) : null;
  // A call the messages API answered or deleted since no longer waits (the engine's rule too).
  const calls = new Set(messages.flatMap((m) => (m.tool_calls ?? []).map((call) => call.id)));
  const answered = new Set(messages.flatMap((m) => m.role === "tool" ? [m.tool_call_id] : []));
  const open = (run ? openInterrupts(run) : []).filter((o) =>
    o.kind === "run" || (calls.has(o.call.tool_call_id) && !answered.has(o.call.tool_call_id))
  );
  return { messageIds: new Set(messages.map((m) => m.message_id)), open };
}
