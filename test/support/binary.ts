// Starts the real `bin/resapi.js` in a child process on 127.0.0.1 port 0 and waits for its first
// stdout line, `listening on http://HOST:PORT` (CONVENTIONS.md#command-line).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../../bin/resapi.js', import.meta.url));
export const REPO = fileURLToPath(new URL('../../../', import.meta.url));

export interface RunningServer {
  readonly url: string;
  readonly child: ChildProcess;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
  /** SIGTERM, then wait for exit; returns the exit code. */
  stop(): Promise<number | null>;
}

/** SIGKILL for a child still running (a suite's last clean-up after a test that failed half-way). */
export function killIfRunning(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

export async function startBinary(args: readonly string[] = ['--memory'], env: Readonly<Record<string, string>> = {}): Promise<RunningServer> {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const url = await firstLine(child, () => err);
  return {
    url,
    child,
    stderr: () => err,
    stop: async () => {
      // A child killed by a signal has a signalCode and a null exitCode; it has exited all the same.
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      return code;
    },
  };
}

/**
 * One server for a whole test file: started in `before`, stopped in `after`. Its fields are read
 * inside tests, once `before` has run.
 */
export function binaryForFile(args: readonly string[], env: Readonly<Record<string, string>> = {}): RunningServer {
  let running: RunningServer | undefined;
  before(async () => {
    running = await startBinary(args, env);
  });
  after(async () => {
    await running?.stop();
  });
  const current = (): RunningServer => {
    if (running === undefined) throw new Error('the server starts in before(); use it inside a test');
    return running;
  };
  return {
    get url() {
      return current().url;
    },
    get child() {
      return current().child;
    },
    stderr: () => current().stderr(),
    stop: () => current().stop(),
  };
}

/** Runs the binary to completion (for commands that must exit, like a refused start). */
export async function runBinary(args: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  return { code, stdout, stderr };
}

function firstLine(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer): void => {
      out += chunk.toString('utf8');
      const newline = out.indexOf('\n');
      if (newline === -1) return;
      child.stdout?.removeListener('data', onData);
      const match = /^listening on (http:\/\/\S+)$/.exec(out.slice(0, newline));
      if (match === null) reject(new Error(`unexpected first line: ${out.slice(0, newline)}`));
      else resolve(match[1] as string);
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code} before listening: ${stderr()}`)));
  });
}
