/**
 * A detached run resumed from its first event (`?after=0`) right after its start is answered, on
 * each store: the run is served from its first event whether it started at once or waited in the
 * run queue (another session's run holding the only slot), and by resumes all along its way from
 * the queue to its first event; never 410001 while its history is not expired.
 */
import assert from "node:assert/strict";
import {
  pacedModel,
  readSse,
  startTestServer,
  storeKinds,
  testRedisUrl,
  type TestServer,
  uniqueName,
  userText,
} from "../_kit/mod.ts";

/** Starts and resumes this many runs per case: the window between start and first event is short. */
const ROUNDS = 30;

/** An echo run of a few words, `ms` between them. */
const body = (ms: number) => ({
  messages: [userText("one two three four")],
  model: pacedModel(ms),
});

async function startDetached(t: TestServer, ms: number): Promise<string> {
  const res = await t.fetch("/v1/runs/start", { method: "POST", json: body(ms) });
  assert.equal(res.status, 202, await res.clone().text());
  return (await res.json()).run_id;
}

/** Resumes a run from its first event and reads it to its end. */
async function assertWhole(t: TestServer, runId: string, round: number): Promise<void> {
  const res = await t.fetch(`/v1/runs/${runId}/events?after=0`);
  if (res.status !== 200) assert.fail(`round ${round}: ${res.status} ${await res.text()}`);
  await wholeRun(res, `round ${round}`);
}

/** Reads a stream resumed from 0 to its end: ids 1, 2, 3, ... from `run_started` to `run_finished`. */
async function wholeRun(res: Response, what: string): Promise<void> {
  const events = await readSse(res).all();
  assert.equal(events[0]?.event, "run_started", what);
  assert.deepEqual(
    events.map((e) => Number(e.id)),
    events.map((_, i) => i + 1),
    `${what}: every event once, in order`,
  );
  assert.equal(events.at(-1)!.event, "run_finished", what);
  assert.equal(JSON.parse(events.at(-1)!.data).status, "completed", what);
}

/**
 * Resumes one after another while a run waits in the queue, is taken from it and starts: some
 * land between its claim and its first event (where PostgreSQL's round trips make a window).
 */
async function resumesAllAlong(t: TestServer): Promise<void> {
  for (let round = 0; round < ROUNDS / 3; round++) {
    const holder = await startDetached(t, 20);
    const queued = await startDetached(t, 10);
    const streams: Promise<void>[] = [];
    const abort = new AbortController();
    try {
      for (let status = "queued"; status === "queued" || status === "running";) {
        const res = await t.fetch(`/v1/runs/${queued}/events?after=0`, { signal: abort.signal });
        if (res.status === 204) break;
        if (res.status !== 200) {
          assert.fail(
            `round ${round}, resume ${streams.length}: ${res.status} ${await res.text()}`,
          );
        }
        streams.push(wholeRun(res, `round ${round}, resume ${streams.length}`));
        status = (await (await t.fetch(`/v1/runs/${queued}`)).json()).status;
      }
    } catch (err) {
      abort.abort();
      await Promise.allSettled(streams);
      throw err;
    }
    await Promise.all(streams);
    await assertWhole(t, holder, round);
  }
}

const oneSlot = { runtime: { runs: { max_concurrent: 1 } } };

for (const store of storeKinds) {
  Deno.test(`resume from 0 (${store}): a run queued behind another session's run`, async () => {
    await using t = await startTestServer({ store, manifest: oneSlot });
    for (let round = 0; round < ROUNDS; round++) {
      // Holds the only slot while the next run is started: that one waits in the queue.
      const holder = await startDetached(t, 5);
      const queued = await startDetached(t, 1);
      await assertWhole(t, queued, round);
      await assertWhole(t, holder, round);
    }
    assert.ok(
      t.logs.some((l) => JSON.parse(l).msg === "queued run started"),
      "some runs waited in the queue",
    );
  });

  Deno.test(`resume from 0 (${store}): a run that starts at once`, async () => {
    await using t = await startTestServer({ store });
    for (let round = 0; round < ROUNDS; round++) {
      await assertWhole(t, await startDetached(t, 1), round);
    }
  });

  Deno.test(`resume from 0 (${store}): all along a queued run's way to its start`, async () => {
    await using t = await startTestServer({ store, manifest: oneSlot });
    await resumesAllAlong(t);
  });
}

Deno.test({
  name: `resume from 0 (${storeKinds.at(-1)}, redis pub/sub): all along a queued run's way`,
  ignore: !testRedisUrl,
}, async () => {
  await using t = await startTestServer({
    store: storeKinds.at(-1),
    manifest: {
      runtime: {
        ...oneSlot.runtime,
        pubsub: { kind: "redis", url: testRedisUrl, prefix: uniqueName("queued_resume") },
      },
    },
  });
  await resumesAllAlong(t);
});
