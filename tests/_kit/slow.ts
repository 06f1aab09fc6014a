/**
 * Slow tests: a test that takes seconds on its own because of what it does on purpose (database
 * processes of its own, a browser, a thousand turns, several server processes) is declared with
 * `slowTest` instead of `Deno.test`, same arguments. `deno task test` runs it; `deno task
 * test:fast` sets `AGENTD_TEST_FAST=1` and it is reported as ignored, for a quick edit-test loop.
 */

/** The variable `deno task test:fast` sets: `1` skips the tests declared with `slowTest`. */
export const FAST_VARIABLE = "AGENTD_TEST_FAST";

/** A test's function, as `Deno.test` takes it. */
type TestFn = (t: Deno.TestContext) => void | Promise<void>;

/**
 * A slow test's options: ignored when `AGENTD_TEST_FAST=1` (read now), and whenever the options
 * ignore it anyway.
 */
export function slowOptions<T extends Omit<Deno.TestDefinition, "fn">>(
  options: T,
): T & { ignore: boolean } {
  const fast = Deno.env.get(FAST_VARIABLE) === "1";
  return { ...options, ignore: Boolean(options.ignore) || fast };
}

/** `Deno.test` for a slow test: the same forms, skipped by `deno task test:fast`. */
export function slowTest(definition: Deno.TestDefinition): void;
export function slowTest(name: string, fn: TestFn): void;
export function slowTest(options: Omit<Deno.TestDefinition, "fn">, fn: TestFn): void;
export function slowTest(
  first: string | Deno.TestDefinition | Omit<Deno.TestDefinition, "fn">,
  fn?: TestFn,
): void {
  if (typeof first === "string") Deno.test(slowOptions({ name: first, fn: fn! }));
  else if (fn) Deno.test(slowOptions(first), fn);
  else Deno.test(slowOptions(first as Deno.TestDefinition));
}
