// The top of CPU profiles (README, Performance): `npm run bench -- --profile DIR` leaves a profile of
// each measured load of resapi in DIR, `<items>-<scenario>-<round>.cpuprofile` (profiled-resapi.ts),
// and this prints, for each scenario over its rounds, the functions that took the most self time (time
// on the CPU in the function's own code, not in what it called), summed over every place V8 saw them,
// as a share of the time the process was not idle; then the same for resapi's own code alone
// (build/lib/), since on loopback the kernel's half of a socket write is billed to Node's `writev` and
// can hide the rest. A profile file is Chrome DevTools' format: nodes with a call frame each, the
// sampled node ids and the microseconds between samples.
import { readFileSync, readdirSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Report } from './measure.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** V8's pseudo-frames for time no JavaScript ran: left out of the total the shares are of. */
const IDLE = new Set(['(idle)']);
const LIB = 'build/lib/';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

export interface SelfTime {
  /** The function's name and where it is: `name (file:line)`. */
  readonly name: string;
  readonly ms: number;
  /** Of the time the process was busy. */
  readonly share: number;
}

/** Microseconds of self time by function, summed over the profiles at `paths`. */
export function selfTimes(paths: readonly string[]): Map<string, number> {
  const self = new Map<string, number>();
  for (const path of paths) {
    const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
    const names = new Map<number, string>();
    for (const node of profile.nodes) names.set(node.id, frameName(node.callFrame));
    profile.samples.forEach((id, index) => {
      const name = names.get(id) ?? '(unknown)';
      self.set(name, (self.get(name) ?? 0) + (profile.timeDeltas[index] ?? 0));
    });
  }
  return self;
}

/** The `count` functions with the most self time (of those `only` keeps), and the busy time their shares are of. */
export function topSelfTime(
  self: ReadonlyMap<string, number>,
  count: number,
  only: (name: string) => boolean = () => true,
): { busyMs: number; top: SelfTime[] } {
  let busy = 0;
  for (const [name, micros] of self) if (!IDLE.has(name)) busy += micros;
  const top = [...self]
    .filter(([name]) => !IDLE.has(name) && only(name))
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([name, micros]) => ({ name, ms: micros / 1000, share: micros / busy }));
  return { busyMs: busy / 1000, top };
}

/** A report section per scenario profiled in `dir`, each its top `count` functions by self time over its rounds. */
export function reportProfiles(report: Report, dir: string, count = 10): void {
  const scenarios = new Map<string, string[]>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.cpuprofile')).sort()) {
    const name = basename(file, '.cpuprofile').replace(/-\d+$/, '');
    scenarios.set(name, [...(scenarios.get(name) ?? []), join(dir, file)]);
  }
  for (const [name, files] of scenarios) {
    const self = selfTimes(files);
    const all = topSelfTime(self, count);
    const own = topSelfTime(self, count, (frame) => frame.includes(`(${LIB}`));
    for (const [section, top] of [[`profile ${name} (busy ${(all.busyMs / 1000).toFixed(1)} s)`, all.top], [`profile ${name}, resapi's own code`, own.top]] as const) {
      top.forEach((entry, index) => report.row(section, String(index + 1), { function: entry.name, 'self ms': entry.ms.toFixed(0), share: `${(100 * entry.share).toFixed(1)}%` }));
    }
  }
}

function frameName(frame: ProfileNode['callFrame']): string {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  if (frame.url === '') return name;
  const file = frame.url.startsWith('file://') ? relative(ROOT, fileURLToPath(frame.url)) : frame.url;
  return `${name} (${file}:${frame.lineNumber + 1})`;
}
