// Timing helpers for the benchmarks: wall-clock milliseconds, medians, and a report printed as a
// table per section. Benchmarks print figures; they never pass or fail on them.

export function time(fn: () => unknown): number {
  const start = process.hrtime.bigint();
  fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export async function timeAsync(fn: () => Promise<unknown>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e6;
}

export function median(runs: number, measure: () => number): number {
  const values = Array.from({ length: runs }, measure).sort((a, b) => a - b);
  return values[Math.floor(values.length / 2)] as number;
}

export async function medianAsync(runs: number, measure: () => Promise<number>): Promise<number> {
  const values: number[] = [];
  for (let run = 0; run < runs; run++) values.push(await measure());
  return values.sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;
}

export class Report {
  private readonly sections = new Map<string, { label: string; values: Record<string, string | number> }[]>();

  row(section: string, label: string, values: Record<string, string | number>): void {
    const rows = this.sections.get(section) ?? [];
    rows.push({ label, values });
    this.sections.set(section, rows);
    process.stdout.write(`[${section}] ${label}: ${Object.entries(values).map(([key, value]) => `${key} ${value}`).join(', ')}\n`);
  }

  /** The whole report as Markdown tables, one per section. */
  markdown(): string {
    const out: string[] = [];
    for (const [section, rows] of this.sections) {
      const columns = [...new Set(rows.flatMap((row) => Object.keys(row.values)))];
      out.push(`### ${section}`, '', `| | ${columns.join(' | ')} |`, `|---|${columns.map(() => '---').join('|')}|`);
      for (const row of rows) out.push(`| ${row.label} | ${columns.map((column) => String(row.values[column] ?? '')).join(' | ')} |`);
      out.push('');
    }
    return out.join('\n');
  }
}
