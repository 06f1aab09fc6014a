/** A JavaScript tool that returns its arguments: what `bench/tools.ts` times is the runner. */
export default function echo(args: Record<string, unknown>): unknown {
  return args;
}

/** Returns a string of `mb` MiB (refused at limits.result_bytes). */
export function big(args: { mb: number }): string {
  return "x".repeat(args.mb * 2 ** 20);
}

/** Emits `count` events until limits.emits stops it; returns how many went out. */
export function flood(args: { count: number }, ctx: { emit(n: string, v: unknown): void }): number {
  let sent = 0;
  try {
    for (; sent < args.count; sent++) ctx.emit("n", sent);
  } catch { /* limits.emits */ }
  return sent;
}
