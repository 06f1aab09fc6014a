/**
 * Headless Chromium for the browser tests: Debian's `chromium` (or `AGENTD_TEST_CHROMIUM`) through
 * `playwright-core`, which downloads no browser of its own.
 */
import { type Browser, chromium } from "playwright-core";

/** Where the Chromium binary is. */
export const CHROMIUM = Deno.env.get("AGENTD_TEST_CHROMIUM") ?? "/usr/bin/chromium";

/** A headless Chromium; `await using` closes it. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"],
  });
}
