/**
 * Async plumbing of the engine: stopping promptly on abort even when a model stream or a tool
 * ignores the signal, and interleaving a tool's live emits with the run's event stream.
 */

/** Thrown inside the engine when the run's signal aborts; turned into a `cancelled` finish. */
export class RunCancelled extends Error {
  constructor() {
    super("the run was cancelled");
    this.name = "RunCancelled";
  }
}

/**
 * The abort reason of a run handed to another attempt (shutdown): the engine writes nothing more
 * and ends without `run_finished`, as it does when a write of it is fenced (`RunFenced`).
 */
export class RunHandedOff extends Error {
  constructor() {
    super("the run was handed over to another replica");
    this.name = "RunHandedOff";
  }
}

/** A promise that rejects with `RunCancelled` once `signal` aborts, and a disposer. */
function abortPromise(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let onAbort = () => {};
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(new RunCancelled());
    if (signal.aborted) onAbort();
    else signal.addEventListener("abort", onAbort, { once: true });
  });
  // Nobody may be racing it when it fires; it must not become an unhandled rejection.
  promise.catch(() => {});
  return { promise, dispose: () => signal.removeEventListener("abort", onAbort) };
}

/** Awaits `promise`, or rejects with `RunCancelled` as soon as `signal` aborts. */
export async function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  const abort = abortPromise(signal);
  try {
    return await Promise.race([promise, abort.promise]);
  } finally {
    abort.dispose();
  }
}

/**
 * Iterates `iterable`, ending with `RunCancelled` as soon as `signal` aborts. One abort listener
 * for the whole iteration rejects the `next()` in flight: racing every item against one pending
 * abort promise would pile a reaction per item onto it for as long as the stream runs.
 */
export async function* abortableIter<T>(
  iterable: AsyncIterable<T>,
  signal: AbortSignal,
): AsyncGenerator<T> {
  const it = iterable[Symbol.asyncIterator]();
  let rejectNext: ((error: RunCancelled) => void) | null = null;
  const onAbort = () => rejectNext?.(new RunCancelled());
  signal.addEventListener("abort", onAbort, { once: true });
  let finished = false;
  try {
    while (true) {
      if (signal.aborted) throw new RunCancelled();
      const r = await new Promise<IteratorResult<T>>((resolve, reject) => {
        rejectNext = reject;
        it.next().then(resolve, reject);
      });
      rejectNext = null;
      if (r.done) {
        finished = true;
        return;
      }
      yield r.value;
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    // Not awaited: a source stuck in an await would hold us; it has the signal to stop itself.
    if (!finished) it.return?.()?.catch(() => {});
  }
}

/**
 * Runs `task`, yielding the items it `push`es while it runs, then returns its value. Pushes after
 * the task settled are dropped (a tool's late emits have no place in the stream). Ends with
 * `RunCancelled` when `signal` aborts first.
 */
export async function* withPushes<E, T>(
  task: (push: (item: E) => void) => Promise<T>,
  signal: AbortSignal,
): AsyncGenerator<E, T> {
  const buffer: E[] = [];
  let wake: (() => void) | null = null;
  let settled = false;
  let outcome: { ok: true; value: T } | { ok: false; error: unknown } | null = null;
  const poke = () => {
    const w = wake;
    wake = null;
    w?.();
  };
  const push = (item: E) => {
    if (settled) return;
    buffer.push(item);
    poke();
  };
  let running: Promise<T>;
  try {
    running = task(push);
  } catch (error) {
    running = Promise.reject(error);
  }
  running.then(
    (value) => outcome = { ok: true, value },
    (error) => outcome = { ok: false, error },
  ).finally(() => {
    settled = true;
    poke();
  });
  signal.addEventListener("abort", poke, { once: true });
  try {
    while (true) {
      while (buffer.length > 0) yield buffer.shift()!;
      if (signal.aborted) throw new RunCancelled();
      if (settled) break;
      await new Promise<void>((resolve) => wake = resolve);
    }
  } finally {
    signal.removeEventListener("abort", poke);
  }
  const done = outcome!;
  if (!done.ok) throw done.error;
  return done.value;
}
