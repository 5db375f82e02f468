// Headless Chromium for tests: Debian's `chromium` package, launched once per page with a fresh
// temporary profile, as `--dump-dom` (the DOM after the page loaded, serialized), `--screenshot` (a
// PNG of the viewport), or left open on a page until the test has seen what it waits for.
// - Every launch is bounded by the caller's AbortSignal (a node:test test's `t.signal`, which aborts
//   when the test times out), never by a sleep.
// - Every launch ends the same way, success or not: the whole process group is killed (the browser
//   forks renderer, GPU and utility processes) and the temporary profile is removed.
// - A missing browser is an error naming the package to install, not a skipped test: CI installs it
//   (.ci/run), so a test that quietly skipped would hide a broken CI.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { accessSync, constants, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where Debian's `chromium` package puts the browser; `CHROMIUM` overrides it. */
export const DEFAULT_CHROMIUM = '/usr/bin/chromium';
/** Every profile of this test process starts with this, so leftovers can be found (see `leftovers`). */
export const PROFILE_PREFIX = join(tmpdir(), `resapi-chromium-${process.pid}-`);
/** How much of the browser's stderr an error message quotes. */
const STDERR_TAIL = 2000;

/**
 * Flags for a browser that runs as root in a container without a display: `--no-sandbox` because
 * the setuid sandbox is unavailable as root; `--disable-dev-shm-usage` because a container's
 * /dev/shm is often 64 MiB; the rest keep it from reaching the network on its own (updates, sync,
 * first-run pages), so the only requests it makes are the test's, to 127.0.0.1.
 */
const BASE_FLAGS = [
  '--headless=new',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--no-first-run',
  '--no-default-browser-check',
  '--disable-extensions',
  '--disable-sync',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-default-apps',
  '--mute-audio',
  '--hide-scrollbars',
] as const;

/** The browser to run: `CHROMIUM` when set, else /usr/bin/chromium; throws saying how to install it. */
export function findChromium(env: NodeJS.ProcessEnv = process.env): string {
  const path = env['CHROMIUM'] ?? DEFAULT_CHROMIUM;
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `No Chromium at ${path}: the browser tests need it. Install Debian's package with ` +
        '`sudo apt-get update && sudo apt-get install -y chromium` (.ci/run does this), or point CHROMIUM at a Chromium or Chrome binary.',
    );
  }
  return path;
}

/** The serialized DOM of `url` once it has loaded (scripts run, the page's own requests may still be pending). */
export async function dumpDom(url: string, signal: AbortSignal): Promise<string> {
  const run = await launch(['--dump-dom'], url, signal);
  const outcome = await run.finished;
  if (outcome.code !== 0 || outcome.stdout.length === 0) throw new Error(`chromium --dump-dom ${url} exited with ${exitOf(outcome)}: ${outcome.stderr}`);
  return outcome.stdout.toString('utf8');
}

/** Writes a PNG of the viewport (`width` × `height` CSS pixels) showing `url` to `file`. */
export async function screenshot(url: string, file: string, size: { readonly width: number; readonly height: number }, signal: AbortSignal): Promise<void> {
  const run = await launch([`--screenshot=${file}`, `--window-size=${size.width},${size.height}`], url, signal);
  const outcome = await run.finished;
  if (outcome.code !== 0) throw new Error(`chromium --screenshot ${url} exited with ${exitOf(outcome)}: ${outcome.stderr}`);
}

/** A page left open in the browser until `close()`; for a page whose script reports back on its own. */
export interface OpenPage {
  /** Rejects if the browser exits, or `signal` aborts, before `close()`. */
  readonly failed: Promise<never>;
  close(): Promise<void>;
}

export async function openPage(url: string, signal: AbortSignal): Promise<OpenPage> {
  const run = await launch([], url, signal);
  let closing = false;
  const failed = run.finished.then((outcome) => {
    throw new Error(closing ? 'closed' : `chromium exited with ${exitOf(outcome)} while the page was still wanted: ${outcome.stderr}`);
  });
  // Only an unwanted exit is worth reporting; after close() nobody awaits this any more.
  failed.catch(() => {});
  return {
    failed,
    async close() {
      closing = true;
      run.kill();
      await run.finished.catch(() => {});
    },
  };
}

/**
 * What this test process's launches left behind: pids of processes with one of its profiles on their
 * command line (Linux /proc; a zombie's cmdline is empty) and profile folders still on disk. Both
 * are empty once every launch has been cleaned up.
 */
export function leftovers(): { processes: number[]; profiles: string[] } {
  const processes: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let cmdline: string;
    try {
      cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue; // it exited while we looked
    }
    if (cmdline.includes(PROFILE_PREFIX)) processes.push(Number(entry));
  }
  const profiles = readdirSync(tmpdir()).filter((name) => join(tmpdir(), name).startsWith(PROFILE_PREFIX));
  return { processes, profiles };
}

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: Buffer;
  readonly stderr: string;
}

interface Launched {
  /** Settles once the browser has exited, its process group is gone and its profile is removed. */
  readonly finished: Promise<Outcome>;
  kill(): void;
}

async function launch(mode: readonly string[], url: string, signal: AbortSignal): Promise<Launched> {
  const binary = findChromium();
  signal.throwIfAborted();
  const profile = await mkdtemp(PROFILE_PREFIX);
  // detached: the browser leads a process group of its own, so one kill reaches every helper it forked.
  const child = spawn(binary, [...BASE_FLAGS, `--user-data-dir=${profile}`, ...mode, url], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const killGroup = (): void => {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  };
  const onAbort = (): void => killGroup();
  signal.addEventListener('abort', onAbort, { once: true });
  const finished = (async (): Promise<Outcome> => {
    try {
      // 'close' comes after 'exit' and after stdout has been read to its end.
      const [code, exitSignal] = (await once(child, 'close')) as [number | null, NodeJS.Signals | null];
      if (signal.aborted) throw new Error(`chromium was stopped (${String(signal.reason)}) before it finished ${url}: ${stderr}`);
      return { code, signal: exitSignal, stdout: Buffer.concat(stdout), stderr };
    } finally {
      signal.removeEventListener('abort', onAbort);
      // A browser that exited on its own may leave helpers behind for a moment; none may outlive the launch.
      killGroup();
      await rm(profile, { recursive: true, force: true, maxRetries: 3 });
    }
  })();
  // Fail now, not at the test's timeout, when the binary cannot even be started.
  try {
    await Promise.race([once(child, 'spawn'), finished]);
  } catch (error) {
    await finished.catch(() => {});
    throw error;
  }
  return { finished, kill: killGroup };
}

function exitOf(outcome: Outcome): string {
  return outcome.signal === null ? `code ${String(outcome.code)}` : `signal ${outcome.signal}`;
}
