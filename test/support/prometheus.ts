// A strict reader of the Prometheus text exposition format 0.0.4, for the tests of /$metrics: it
// throws on anything the format does not allow, rather than guessing. Rules read:
// - lines end with "\n" (the text too); `# HELP name text` and `# TYPE name type` at most once per
//   family and before its samples; no other comment lines (resapi writes none);
// - a sample is `name{label="value",...} value` with names [a-zA-Z_:][a-zA-Z0-9_:]*, label names
//   [a-zA-Z_][a-zA-Z0-9_]* (never starting "__"), label values escaping only \\ \" \n, and a
//   value Go's ParseFloat reads (NaN, +Inf, -Inf included); no timestamps (resapi writes none);
// - a family's samples are contiguous, no series repeats, counters are never negative;
// - a histogram `h` has only h_bucket (with `le`), h_sum and h_count per label set; its buckets
//   ascend by `le`, their counts never decrease, the last is le="+Inf" and equals h_count.

export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface MetricFamily {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'gauge' | 'histogram' | 'summary' | 'untyped';
  readonly samples: Sample[];
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const FLOAT = /^(?:[+-]?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|[+-]?Inf|NaN)$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

export function parseExposition(text: string): Map<string, MetricFamily> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, MetricFamily>();
  const series = new Set<string>();
  let current: MetricFamily | undefined;
  const lines = text.slice(0, -1).split('\n');
  lines.forEach((line, index) => {
    const where = `line ${index + 1}: ${JSON.stringify(line)}`;
    if (line.startsWith('#')) {
      const match = /^# (HELP|TYPE) ([^ ]+) (.*)$/.exec(line);
      if (match === null) throw new Error(`${where}: a comment other than HELP or TYPE`);
      const [, kind, name, rest] = match as unknown as [string, string, string, string];
      if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
      let family = families.get(name);
      if (family !== undefined && family.samples.length > 0) throw new Error(`${where}: ${kind} after the family's samples`);
      if (family === undefined) {
        family = { name, help: '', type: 'untyped', samples: [] };
        families.set(name, family);
      }
      if (kind === 'HELP') {
        if (family.help !== '') throw new Error(`${where}: HELP twice`);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`${where}: HELP escapes only \\\\ and \\n`);
        (family as { help: string }).help = rest;
      } else {
        if (!TYPES.has(rest)) throw new Error(`${where}: unknown type`);
        if ((family as { typed?: boolean }).typed === true) throw new Error(`${where}: TYPE twice`);
        Object.assign(family, { type: rest, typed: true });
      }
      current = family;
      return;
    }
    if (line === '') throw new Error(`${where}: an empty line`);
    const sample = parseSample(line, where);
    const familyName = familyOf(sample.name, families);
    const family = families.get(familyName);
    if (family === undefined || family !== current) throw new Error(`${where}: a sample outside its family (or before its TYPE)`);
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`;
    if (series.has(key)) throw new Error(`${where}: the series repeats`);
    series.add(key);
    if (family.type === 'counter' && !(sample.value >= 0)) throw new Error(`${where}: a negative counter`);
    family.samples.push(sample);
  });
  for (const family of families.values()) if (family.type === 'histogram') checkHistogram(family);
  return families;
}

/** The family a sample belongs to: a histogram's _bucket, _sum and _count belong to the histogram. */
function familyOf(name: string, families: ReadonlyMap<string, MetricFamily>): string {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.slice(0, -suffix.length);
    if (name.endsWith(suffix) && families.get(base)?.type === 'histogram') return base;
  }
  return name;
}

function parseSample(line: string, where: string): Sample {
  const nameEnd = line.search(/[{ ]/);
  if (nameEnd <= 0) throw new Error(`${where}: no value`);
  const name = line.slice(0, nameEnd);
  if (!METRIC_NAME.test(name)) throw new Error(`${where}: bad metric name`);
  const labels: Record<string, string> = {};
  let at = nameEnd;
  if (line[at] === '{') {
    at++;
    while (line[at] !== '}') {
      const equals = line.indexOf('=', at);
      const label = line.slice(at, equals);
      if (equals === -1 || !LABEL_NAME.test(label) || label.startsWith('__')) throw new Error(`${where}: bad label name`);
      if (line[equals + 1] !== '"') throw new Error(`${where}: an unquoted label value`);
      let value = '';
      let index = equals + 2;
      for (;; index++) {
        const char = line[index];
        if (char === undefined) throw new Error(`${where}: an unterminated label value`);
        if (char === '"') break;
        if (char === '\\') {
          const next = line[++index];
          if (next === '\\') value += '\\';
          else if (next === '"') value += '"';
          else if (next === 'n') value += '\n';
          else throw new Error(`${where}: a label value escapes only \\\\ \\" \\n`);
        } else {
          value += char;
        }
      }
      if (Object.hasOwn(labels, label)) throw new Error(`${where}: the label ${label} twice`);
      labels[label] = value;
      at = index + 1;
      if (line[at] === ',') at++;
      else if (line[at] !== '}') throw new Error(`${where}: labels must be separated by commas`);
    }
    at++;
  }
  if (line[at] !== ' ') throw new Error(`${where}: one space before the value`);
  const valueText = line.slice(at + 1);
  if (!FLOAT.test(valueText)) throw new Error(`${where}: not a float (or a timestamp follows)`);
  const value = valueText.endsWith('Inf') ? (valueText.startsWith('-') ? -Infinity : Infinity) : Number(valueText);
  return { name, labels, value };
}

function checkHistogram(family: MetricFamily): void {
  const groups = new Map<string, { buckets: { le: number; count: number }[]; sum?: number; count?: number }>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    const group = groups.get(key) ?? { buckets: [] };
    groups.set(key, group);
    if (sample.name === `${family.name}_bucket`) {
      if (le === undefined || !FLOAT.test(le)) throw new Error(`${family.name}: a bucket without a float le`);
      group.buckets.push({ le: le === '+Inf' ? Infinity : Number(le), count: sample.value });
    } else if (sample.name === `${family.name}_sum`) group.sum = sample.value;
    else if (sample.name === `${family.name}_count`) group.count = sample.value;
    else throw new Error(`${family.name}: the sample ${sample.name} in a histogram`);
  }
  for (const [key, group] of groups) {
    const { buckets, count, sum } = group;
    if (count === undefined || sum === undefined || buckets.length === 0) throw new Error(`${family.name}${key}: buckets, _sum and _count are all needed`);
    for (let i = 1; i < buckets.length; i++) {
      const before = buckets[i - 1] as { le: number; count: number };
      const bucket = buckets[i] as { le: number; count: number };
      if (!(bucket.le > before.le)) throw new Error(`${family.name}${key}: buckets out of order`);
      if (bucket.count < before.count) throw new Error(`${family.name}${key}: a bucket count that decreases`);
    }
    const last = buckets[buckets.length - 1] as { le: number; count: number };
    if (last.le !== Infinity || last.count !== count) throw new Error(`${family.name}${key}: the +Inf bucket must exist and equal _count`);
  }
}

/** The value of the one sample of `name` whose labels include `labels`, or undefined. */
export function sampleValue(families: ReadonlyMap<string, MetricFamily>, family: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  return families.get(family)?.samples.find((sample) => sample.name === name && Object.entries(labels).every(([label, value]) => sample.labels[label] === value))?.value;
}
