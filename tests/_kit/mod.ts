/**
 * The test kit: what every test imports to start servers and stores, read event streams, wait on
 * conditions, check error bodies and move time. See README.md in this folder.
 */
export { CHROMIUM, launchChromium } from "./browser.ts";
export { TestClock } from "./clock.ts";
export { assertError, type ErrorBody, type ErrorExpectation } from "./errors.ts";
export { eventually, type EventuallyOptions, type Settled } from "./eventually.ts";
export {
  startTestServer,
  type StoreKind,
  storeKinds,
  type TestServer,
  type TestServerOptions,
} from "./server.ts";
export { dropSchema, skipNotice, testPostgresUrl, testRedisUrl, uniqueName } from "./services.ts";
export {
  type EventData,
  type ParsedSse,
  parseSse,
  readEvents,
  readSse,
  type SseComment,
  type SseEvent,
  SseReader,
} from "./sse.ts";
export { FAST_VARIABLE, slowOptions, slowTest } from "./slow.ts";
export { openTestStore, type TestStore, type TestStoreOptions } from "./store.ts";
export { type TempDir, tempDir } from "./temp.ts";
export { type HealthProbe, probeHealth } from "./health_probe.ts";
export {
  DEPLOY_PERMISSIONS,
  type ServerProcess,
  type ServerProcessOptions,
  startServerProcess,
} from "./process.ts";
export { pacedModel, userText } from "./messages.ts";
