/**
 * A small Prometheus metrics registry: counters, gauges and histograms with labels, rendered in
 * the text exposition format 0.0.4. One registry per app instance (no process-wide default), so
 * tests can start many servers in one process and read each one's numbers.
 */

/** The `Content-Type` of the text exposition format this registry renders. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** Label values of one series, by label name. */
export type Labels<L extends string> = Readonly<Record<L, string>>;

/** What every metric kind shares: its name, help text and label names. */
export interface MetricOptions<L extends string> {
  /** `[a-zA-Z_:][a-zA-Z0-9_:]*`; by convention `agentd_<what>_<unit>[_total]`. */
  name: string;
  /** One line saying what the metric counts or measures. */
  help: string;
  /** Names of the labels every series of the metric carries, in output order. */
  labelNames?: readonly L[];
}

/** Options of a histogram: its upper bucket bounds (ascending; `+Inf` is added). */
export interface HistogramOptions<L extends string> extends MetricOptions<L> {
  /** Upper bounds of the buckets, ascending (`+Inf` is implied). */
  buckets: readonly number[];
}

/** Bucket bounds for durations in seconds, 1 ms to 30 s. */
export const SECONDS_BUCKETS: readonly number[] = [
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  0.5,
  1,
  2.5,
  5,
  10,
  30,
];

/** Bucket bounds for fast operations in seconds (store queries, publishes), 0.1 ms to 2.5 s. */
export const FAST_SECONDS_BUCKETS: readonly number[] = [
  0.0001,
  0.00025,
  0.0005,
  0.001,
  0.0025,
  0.005,
  0.01,
  0.025,
  0.05,
  0.1,
  0.25,
  1,
  2.5,
];

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A metric the registry can render. */
export interface Renderable {
  /** The metric's name. */
  readonly name: string;
  /** Appends its lines in the text format to `out`. */
  render(out: string[]): void;
}

/** Escapes a label value (backslash, double quote, newline), as the format requires. */
function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Escapes HELP text (backslash and newline). */
function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

/** A sample value in the format's spelling (`+Inf`, `-Inf`, `NaN`, or a JS number). */
function formatValue(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return String(value);
}

function labelText(names: readonly string[], values: readonly string[], extra?: string): string {
  const parts = names.map((n, i) => `${n}="${escapeLabelValue(values[i])}"`);
  if (extra) parts.push(extra);
  return parts.length > 0 ? `{${parts.join(",")}}` : "";
}

/** Shared by the three kinds: name checks, label bookkeeping, the HELP/TYPE header. */
export abstract class Metric<L extends string, S> implements Renderable {
  /** The metric's name (`agentd_...`). */
  readonly name: string;
  /** The HELP text. */
  readonly help: string;
  /** The names of its labels, in order. */
  readonly labelNames: readonly L[];
  /** Its series by label values. */
  protected readonly series = new Map<string, { values: string[]; state: S }>();

  /** A metric named and described by `options`, of kind `type` (names checked). */
  constructor(options: MetricOptions<L>, readonly type: "counter" | "gauge" | "histogram") {
    if (!METRIC_NAME.test(options.name)) throw new Error(`bad metric name: ${options.name}`);
    for (const label of options.labelNames ?? []) {
      if (!LABEL_NAME.test(label) || label.startsWith("__") || label === "le") {
        throw new Error(`bad label name on ${options.name}: ${label}`);
      }
    }
    this.name = options.name;
    this.help = options.help;
    this.labelNames = options.labelNames ?? [];
  }

  /** The state of a new series. */
  protected abstract initial(): S;

  /** The state of the series with these labels, created on first use. */
  protected state(labels: Partial<Labels<L>> | undefined): S {
    return this.#find(labels, true)!.state;
  }

  /** The state of an existing series, without creating it. */
  protected peek(labels: Partial<Labels<L>> | undefined): S | undefined {
    return this.#find(labels, false)?.state;
  }

  /**
   * Series by label value, one level of maps per label, the last level holding the series (no
   * labels: the key ""). An observation walks it without building a key for the series.
   */
  readonly #index = new Map<string, unknown>();

  #find(
    labels: Partial<Labels<L>> | undefined,
    create: boolean,
  ): { values: string[]; state: S } | undefined {
    const names = this.labelNames;
    let level: Map<string, unknown> | undefined = this.#index;
    for (let i = 0; i < names.length - 1; i++) {
      // Every label is checked, also below a level that does not exist (a missing one throws).
      const value = this.#value(labels, names[i]);
      let next: Map<string, unknown> | undefined = level?.get(value) as typeof level;
      if (!next && level && create) level.set(value, next = new Map());
      level = next;
    }
    const key = names.length === 0 ? "" : this.#value(labels, names[names.length - 1]);
    let entry = level?.get(key) as { values: string[]; state: S } | undefined;
    if (!entry && create) {
      // Created here, in its index level and in the output order.
      const values = names.map((n) => this.#value(labels, n));
      entry = { values, state: this.initial() };
      level!.set(key, entry);
      this.series.set(JSON.stringify(values), entry);
    }
    return entry;
  }

  #value(labels: Partial<Labels<L>> | undefined, name: L): string {
    const v = labels?.[name];
    if (v === undefined) throw new Error(`${this.name}: label ${name} is missing`);
    return String(v);
  }

  /** Writes the HELP and TYPE lines. */
  protected header(out: string[]): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`);
    out.push(`# TYPE ${this.name} ${this.type}`);
  }

  /** Writes the metric in the text format. */
  abstract render(out: string[]): void;
}

/** A value that only goes up (requests, runs, failures). */
export class Counter<L extends string = never> extends Metric<L, { value: number }> {
  /** A counter named and described by `options`. */
  constructor(options: MetricOptions<L>) {
    super(options, "counter");
    // An unlabelled counter is reported as 0 before its first increment.
    if (this.labelNames.length === 0) this.state(undefined);
  }

  /** A new series starts at 0. */
  protected initial(): { value: number } {
    return { value: 0 };
  }

  /** Adds `by` (default 1; must not be negative). */
  inc(labels?: Labels<L>, by = 1): void {
    if (by < 0) throw new Error(`${this.name}: a counter cannot decrease`);
    this.state(labels).value += by;
  }

  /** Creates the series with these labels at 0, so it is exported before its first event. */
  touch(labels?: Labels<L>): void {
    this.state(labels);
  }

  /** The current value of one series (0 when it does not exist yet). */
  get(labels?: Labels<L>): number {
    return this.peek(labels)?.value ?? 0;
  }

  /** Writes the counter in the text format. */
  render(out: string[]): void {
    this.header(out);
    for (const { values, state } of this.series.values()) {
      out.push(`${this.name}${labelText(this.labelNames, values)} ${formatValue(state.value)}`);
    }
  }
}

/** A value that goes up and down, set directly or read from a callback at scrape time. */
export class Gauge<L extends string = never> extends Metric<L, { value: number }> {
  #collect?: () => void;

  /** A gauge named and described by `options`. */
  constructor(options: MetricOptions<L>) {
    super(options, "gauge");
    if (this.labelNames.length === 0) this.state(undefined);
  }

  /** A new series starts at 0. */
  protected initial(): { value: number } {
    return { value: 0 };
  }

  /** Sets one series to `value`. */
  set(labels: Labels<L> | undefined, value: number): void {
    this.state(labels).value = value;
  }

  /** Adds `by` (default 1) to one series. */
  inc(labels?: Labels<L>, by = 1): void {
    this.state(labels).value += by;
  }

  /** Subtracts `by` (default 1) from one series. */
  dec(labels?: Labels<L>, by = 1): void {
    this.state(labels).value -= by;
  }

  /** The current value of one series (0 when it does not exist yet). */
  get(labels?: Labels<L>): number {
    return this.peek(labels)?.value ?? 0;
  }

  /** Reads the value from `collect` (which calls `set`) each time the registry renders. */
  collectWith(collect: () => void): void {
    this.#collect = collect;
  }

  /** Writes the gauge in the text format (after collecting it). */
  render(out: string[]): void {
    try {
      this.#collect?.();
    } catch {
      // A failing callback must not break the whole scrape; the last value stays.
    }
    this.header(out);
    for (const { values, state } of this.series.values()) {
      out.push(`${this.name}${labelText(this.labelNames, values)} ${formatValue(state.value)}`);
    }
  }
}

/** One histogram series: counts per bucket, the sum and the number of observations. */
export interface HistogramState {
  /** Observations per bucket (not cumulative). */
  counts: number[];
  /** The sum of all observations. */
  sum: number;
  /** The number of observations. */
  count: number;
}

/** A distribution of observations in cumulative buckets, with their sum and count. */
export class Histogram<L extends string = never> extends Metric<L, HistogramState> {
  /** Upper bounds of the buckets, ascending. */
  readonly buckets: readonly number[];

  /** A histogram named and described by `options`, with its buckets. */
  constructor(options: HistogramOptions<L>) {
    super(options, "histogram");
    const sorted = [...options.buckets].sort((a, b) => a - b);
    if (sorted.length === 0 || sorted.some((b, i) => !Number.isFinite(b) || b === sorted[i - 1])) {
      throw new Error(`${options.name}: buckets must be distinct finite numbers`);
    }
    this.buckets = sorted;
  }

  /** A new series has empty buckets. */
  protected initial(): HistogramState {
    return { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
  }

  /** Records one observation. */
  observe(labels: Labels<L> | undefined, value: number): void {
    const s = this.state(labels);
    for (let i = 0; i < this.buckets.length; i++) {
      if (value <= this.buckets[i]) s.counts[i]++;
    }
    s.sum += value;
    s.count++;
  }

  /** Count and sum of one series (zeros when it does not exist yet). */
  get(labels?: Labels<L>): { count: number; sum: number } {
    const s = this.peek(labels);
    return { count: s?.count ?? 0, sum: s?.sum ?? 0 };
  }

  /** Writes the histogram in the text format (cumulative buckets, sum, count). */
  render(out: string[]): void {
    this.header(out);
    for (const { values, state } of this.series.values()) {
      this.buckets.forEach((bound, i) => {
        const labels = labelText(this.labelNames, values, `le="${formatValue(bound)}"`);
        out.push(`${this.name}_bucket${labels} ${state.counts[i]}`);
      });
      const inf = labelText(this.labelNames, values, `le="+Inf"`);
      out.push(`${this.name}_bucket${inf} ${state.count}`);
      const plain = labelText(this.labelNames, values);
      out.push(`${this.name}_sum${plain} ${formatValue(state.sum)}`);
      out.push(`${this.name}_count${plain} ${state.count}`);
    }
  }
}

/** The metrics of one app instance, rendered together for `GET /metrics`. */
export class MetricsRegistry {
  readonly #metrics = new Map<string, Renderable>();

  #add<M extends Renderable>(metric: M): M {
    if (this.#metrics.has(metric.name)) throw new Error(`metric ${metric.name} exists`);
    this.#metrics.set(metric.name, metric);
    return metric;
  }

  /** Registers a counter. */
  counter<L extends string = never>(options: MetricOptions<L>): Counter<L> {
    return this.#add(new Counter(options));
  }

  /** Registers a gauge. */
  gauge<L extends string = never>(options: MetricOptions<L>): Gauge<L> {
    return this.#add(new Gauge(options));
  }

  /** Registers a histogram. */
  histogram<L extends string = never>(options: HistogramOptions<L>): Histogram<L> {
    return this.#add(new Histogram(options));
  }

  /** Every metric in the text exposition format 0.0.4 (ends with a newline). */
  render(): string {
    const out: string[] = [];
    for (const metric of this.#metrics.values()) metric.render(out);
    return out.join("\n") + "\n";
  }
}
