/** A JavaScript tool that returns its arguments: what `bench/tools.ts` times is the runner. */
export default function echo(args: Record<string, unknown>): unknown {
  return args;
}
