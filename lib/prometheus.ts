// Counters, gauges and histograms, written in the Prometheus text exposition format 0.0.4 (what
// `GET /$metrics` answers, CONVENTIONS.md#metrics; README, Performance). Every metric family has one HELP and
// one TYPE line before its samples, label values are escaped (\\, \", \n), a histogram has
// cumulative `_bucket` samples ending in `le="+Inf"`, then `_sum` and `_count`. Label sets come
// from bounded vocabularies only (route names, methods, statuses), never from what a request names,
// so no stranger can grow the registry.

export type Labels = Readonly<Record<string, string>>;

interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram';
  /** The family's lines after HELP and TYPE. */
  samples(): string[];
}

/** One labelled series of a counter, which a caller that adds to it on every request keeps. */
export interface CounterSeries {
  add(amount?: number): void;
}

/** One labelled series of a histogram, which a caller that observes it on every request keeps. */
export interface HistogramSeries {
  observe(value: number): void;
}

export class Counter implements Family {
  readonly type = 'counter';
  private readonly values = new Map<string, CounterEntry>();

  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  add(labels: Labels, amount = 1): void {
    this.series(labels).add(amount);
  }

  /** The series of `labels`, made (at zero) the first time it is asked for. */
  series(labels: Labels): CounterSeries {
    const key = labelKey(labels);
    let entry = this.values.get(key);
    if (entry === undefined) this.values.set(key, (entry = new CounterEntry(labels)));
    return entry;
  }

  samples(): string[] {
    return [...this.values.values()].map((entry) => `${this.name}${labelText(entry.labels)} ${number(entry.value)}`);
  }
}

class CounterEntry implements CounterSeries {
  value = 0;

  constructor(readonly labels: Labels) {}

  add(amount = 1): void {
    this.value += amount;
  }
}

export class Histogram implements Family {
  readonly type = 'histogram';
  private readonly series = new Map<string, HistogramEntry>();

  /** `buckets`: upper bounds, ascending; +Inf is implied. */
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    this.seriesOf(labels).observe(value);
  }

  /** The series of `labels`, made (empty) the first time it is asked for. */
  seriesOf(labels: Labels): HistogramSeries {
    const key = labelKey(labels);
    let series = this.series.get(key);
    if (series === undefined) this.series.set(key, (series = new HistogramEntry(labels, this.buckets)));
    return series;
  }

  samples(): string[] {
    const lines: string[] = [];
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, index) => {
        cumulative += counts[index] as number;
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: number(bound) })} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: '+Inf' })} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${number(sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines;
  }
}

class HistogramEntry implements HistogramSeries {
  /** Each count is of its own bucket; samples() makes them cumulative. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Labels,
    private readonly buckets: readonly number[],
  ) {
    this.counts = buckets.map(() => 0);
  }

  observe(value: number): void {
    const { buckets, counts } = this;
    for (let index = 0; index < buckets.length; index++) {
      if (value <= (buckets[index] as number)) {
        counts[index] = (counts[index] as number) + 1;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

/** A gauge whose values are read when the metrics are rendered. */
export class Gauge implements Family {
  readonly type = 'gauge';

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => readonly { readonly labels: Labels; readonly value: number }[],
  ) {}

  samples(): string[] {
    return this.read().map((sample) => `${this.name}${labelText(sample.labels)} ${number(sample.value)}`);
  }
}

/** The text of some metric families, in the order given. */
export function exposition(families: readonly Family[]): string {
  const lines: string[] = [];
  for (const family of families) {
    const help = family.help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
    lines.push(`# HELP ${family.name} ${help}`, `# TYPE ${family.name} ${family.type}`, ...family.samples());
  }
  return `${lines.join('\n')}\n`;
}

export const EXPOSITION_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

function labelKey(labels: Labels): string {
  return Object.values(labels).join('\u0000');
}

function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(([name, value]) => {
    const escaped = value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
    return `${name}="${escaped}"`;
  });
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** A sample value as Go's strconv would write it for Prometheus: integers plainly, +Inf and NaN spelled out. */
function number(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
