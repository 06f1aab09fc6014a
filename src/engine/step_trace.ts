/**
 * The step records of a run (`GET /v1/runs/{id}/steps`, src/api/run_steps.ts): when each step
 * started and how long it took; a model step's time to its first output and, when
 * `runtime.record_model_requests` is on, the request as the provider received it; a tool step's
 * server tool calls with their arguments, results and durations. Each is saved as its step ends,
 * by its own store method; a failed save is logged, never the run's failure.
 */
import {
  boundedJson,
  MAX_EMIT_BYTES,
  MAX_EMITS,
  MAX_REQUEST_BYTES,
  MAX_TOOL_VALUE_BYTES,
  type RunStep,
} from "../api/run_steps.ts";
import type { ToolCall } from "../api/schemas.ts";
import type { RunEvent } from "../api/events.ts";
import type { Logger } from "../log.ts";
import type { ModelEvent, ModelStream } from "../models/mod.ts";
import type { Store } from "../store/mod.ts";

/** Model events that are output: the first of them is the step's first token. */
const OUTPUT = new Set<ModelEvent["type"]>([
  "text-delta",
  "reasoning-start",
  "reasoning-delta",
  "tool-call-start",
  "tool-call",
  "provider-tool-call",
]);

/** Milliseconds since `start` (a `performance.now()`), to 0.1 ms. */
function since(start: number): number {
  return Math.round((performance.now() - start) * 10) / 10;
}

/** One step being recorded. */
interface Open {
  record: RunStep;
  /** `performance.now()` at its start. */
  t0: number;
}

/** The step records of one run attempt. */
export class StepTrace {
  #open: Open | null = null;

  constructor(
    private readonly store: Pick<Store, "saveRunStep">,
    private readonly runId: string,
    private readonly log: Logger,
    private readonly options: {
      /** The attempt writing; 1 when absent. */
      attempt?: number;
      /** Whether model requests are kept (`runtime.record_model_requests`). */
      requests: boolean;
      /** When a step starts (the store's clock), in ms since the epoch. */
      now: () => number;
    },
  ) {}

  /** Step `step` of `kind` starts now (an unsaved open step is dropped). */
  begin(step: number, kind: "model" | "tools", model?: { provider: string; model: string }) {
    this.#open = {
      t0: performance.now(),
      record: {
        step,
        kind,
        attempt: this.options.attempt ?? 1,
        started_at: new Date(this.options.now()).toISOString(),
        duration_ms: 0,
        ...(model ? { provider: model.provider, model: model.model, first_token_ms: null } : {}),
        ...(kind === "tools" ? { tool_calls: [] } : {}),
      },
    };
  }

  /**
   * The model step's stream: its request is kept (when recording them) and its events pass
   * through, the first output stamping the time to first token.
   */
  async *model(stream: ModelStream): AsyncGenerator<ModelEvent> {
    const open = this.#open;
    if (open) {
      open.record.request = this.options.requests && stream.sent
        ? stream.sent(MAX_REQUEST_BYTES)
        : null;
    }
    for await (const event of stream.events) {
      if (open && open.record.first_token_ms === null && OUTPUT.has(event.type)) {
        open.record.first_token_ms = since(open.t0);
      }
      yield event;
    }
  }

  /**
   * A server tool call of the open tool step: its events pass through, the emits among them kept
   * (the first `MAX_EMITS`), and its outcome is kept with its input and duration.
   */
  async *tool<R extends { result: unknown; is_error: boolean }>(
    call: ToolCall,
    calling: AsyncGenerator<RunEvent, R>,
  ): AsyncGenerator<RunEvent, R> {
    const started_at = new Date(this.options.now()).toISOString();
    const t0 = performance.now();
    const calls = this.#open?.record.tool_calls;
    const emits: { name: string; value: unknown }[] = [];
    let next: IteratorResult<RunEvent, R> | undefined;
    try {
      for (next = await calling.next(); !next.done; next = await calling.next()) {
        const event = next.value;
        if (event.kind === "custom" && emits.length < MAX_EMITS) {
          emits.push({ name: event.name, value: boundedJson(event.value, MAX_EMIT_BYTES).value });
        }
        yield event;
      }
    } finally {
      // Abandoned midway (the run stopped reading): the call is closed as `yield*` would.
      if (!next?.done) await calling.return(undefined as unknown as R);
    }
    const outcome = next.value;
    calls?.push({
      tool_call_id: call.id,
      tool_name: call.name,
      arguments: boundedJson(call.arguments, MAX_TOOL_VALUE_BYTES).value,
      result: boundedJson(outcome.result ?? null, MAX_TOOL_VALUE_BYTES).value,
      is_error: outcome.is_error,
      started_at,
      duration_ms: since(t0),
      ...(emits.length > 0 ? { emits } : {}),
    });
    return outcome;
  }

  /**
   * The open step failed the run with `error`: kept on its record, with the request a failed model
   * call sent (`ModelError.sent`), when it sent one.
   */
  fail(error: { code: string; message: string } | null, cause: unknown): void {
    const open = this.#open;
    if (!open) return;
    if (error) open.record.error = { code: error.code, message: error.message };
    const sent = (cause as { sent?: ModelStream["sent"] } | null)?.sent;
    if (open.record.kind === "model" && !("request" in open.record)) {
      open.record.request = this.options.requests && sent ? sent(MAX_REQUEST_BYTES) : null;
    }
  }

  /** Ends the open step and saves its record. */
  async end(): Promise<void> {
    const open = this.#open;
    if (!open) return;
    this.#open = null;
    open.record.duration_ms = since(open.t0);
    try {
      await this.store.saveRunStep(this.runId, open.record, this.options.attempt);
    } catch (error) {
      this.log.error("could not save the step record of the run", { error: String(error) });
    }
  }
}
