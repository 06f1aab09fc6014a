/**
 * The agents the A2A end-to-end tests run: echo agents with the `pay` (needs an approval) and
 * `bump` tools, answering at once or word by word, so a task can be caught still working.
 */

const fixtures = new URL("./fixtures/tools.ts", import.meta.url).pathname;

/** The agent block of the fast and slow echo. */
export const agent = {
  name: "a2a-test",
  description: "An echo agent for the A2A tests",
  version: "1.2.3",
  model: { provider: "echo" },
};

const tools = {
  pay: {
    kind: "javascript",
    module: fixtures,
    function: "pay",
    description: "Pays an amount",
    requires_approval: true,
  },
  bump: { kind: "javascript", module: fixtures, function: "bump", description: "Counts" },
};

/** Fast echo, with tools. */
export const fastManifest = { agent, tool: tools, http_server: { protocol: { a2a: {} } } };

/** Echo that waits between deltas, so a task is still working when we act on it. */
export const slowManifest = {
  agent: {
    ...agent,
    model: { provider: "echo", inference_params: { provider_params: { delay_ms: 60 } } },
  },
  http_server: { protocol: { a2a: {} } },
};

/** 30 words: about two seconds of the slow echo. */
export const SLOW_TEXT = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");

/** An extension the bindings' agent can be told to require. */
export const REQUIRED_EXT = "https://example.com/ext/signed/v1";
/** The optional extension the bindings' agent declares. */
export const OPTIONAL_EXT = "https://example.com/ext/citations/v1";

/**
 * The agent the same scenarios run on over both bindings: echo with tools, slow enough (per word)
 * that a long text keeps its task working a while.
 */
export const bindingsManifest = {
  agent: {
    name: "a2a-bindings",
    description: "An echo agent for the A2A binding tests",
    version: "2.0.0",
    model: { provider: "echo", inference_params: { provider_params: { delay_ms: 20 } } },
  },
  tool: tools,
  http_server: {
    protocol: { a2a: { extension: { [OPTIONAL_EXT]: { description: "Citations" } } } },
  },
};

/** 25 words: about half a second of echo, ample to see the task working first. */
export const MEDIUM_TEXT = Array.from({ length: 25 }, (_, i) => `w${i}`).join(" ");

/** 250 words: about five seconds of echo, far longer than any step that acts on the task. */
export const LONG_TEXT = Array.from({ length: 250 }, (_, i) => `word${i}`).join(" ");
