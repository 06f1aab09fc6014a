/** The metrics registry's series: found by their label values, created once, in output order. */
import assert from "node:assert/strict";
import { MetricsRegistry } from "../../src/metrics/mod.ts";

Deno.test("registry: each combination of label values is one series, in first-use order", () => {
  const r = new MetricsRegistry();
  const c = r.counter({ name: "t_total", help: "c", labelNames: ["a", "b"] });
  // Values a joined key could confuse stay apart.
  c.inc({ a: "x,y", b: "z" });
  c.inc({ a: "x", b: "y,z" }, 2);
  c.inc({ a: 'x","y', b: "z" }, 3);
  c.inc({ a: "x", b: "y,z" }, 4);
  assert.equal(c.get({ a: "x,y", b: "z" }), 1);
  assert.equal(c.get({ a: "x", b: "y,z" }), 6);
  assert.equal(c.get({ a: 'x","y', b: "z" }), 3);
  // Reading a series that does not exist creates nothing.
  assert.equal(c.get({ a: "nope", b: "z" }), 0);
  assert.equal(c.get({ a: "x", b: "nope" }), 0);
  const lines = r.render().split("\n").filter((l) => l.startsWith("t_total"));
  assert.deepEqual(lines, [
    't_total{a="x,y",b="z"} 1',
    't_total{a="x",b="y,z"} 6',
    't_total{a="x\\",\\"y",b="z"} 3',
  ]);
  // A missing label is an error, also when its series would not exist.
  assert.throws(() => c.inc({ a: "x" } as never), /label b is missing/);
  assert.throws(() => c.get({ a: "nope" } as never), /label b is missing/);
  assert.throws(() => c.get({ b: "z" } as never), /label a is missing/);
});

Deno.test("registry: a histogram series per label value, and one without labels", () => {
  const r = new MetricsRegistry();
  const h = r.histogram({ name: "t_seconds", help: "h", labelNames: ["m"], buckets: [1] });
  h.observe({ m: "a" }, 0.5);
  h.observe({ m: "b" }, 2);
  h.observe({ m: "a" }, 3);
  assert.deepEqual(h.get({ m: "a" }), { count: 2, sum: 3.5 });
  assert.deepEqual(h.get({ m: "b" }), { count: 1, sum: 2 });
  const g = r.gauge({ name: "t_open", help: "g" });
  g.inc();
  g.inc(undefined, 2);
  g.dec();
  assert.equal(g.get(), 2);
  assert.match(r.render(), /^t_open 2$/m);
});
