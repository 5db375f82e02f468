// Is a process on this host still running? The data-dir lock (lock.ts) asks it of the lock's holder.
//
// `kill(pid, 0)` alone is not enough: it succeeds for a zombie, a process that has died (kill -9
// included) but whose parent has not yet collected its exit status. Nothing of a zombie runs and it
// holds no file open, yet its pid exists until the parent waits for it, which a supervisor may do
// late or never. So on Linux the state letter in /proc/<pid>/stat decides: Z (zombie) or X (dead)
// is not running. Elsewhere, where there is no /proc, a zombie counts as running: refusing to start
// is the safe mistake (CONVENTIONS.md#data-directory).
import { readFile } from 'node:fs/promises';
import { hasCode } from './fs-io.js';

export type ProcessState = 'running' | 'zombie' | 'gone';

/** Process states of /proc/<pid>/stat that run nothing: zombie, and dead (being reaped). */
const DEAD_STATES: Readonly<Record<string, ProcessState>> = Object.freeze({ Z: 'zombie', X: 'gone', x: 'gone' });

/** What became of process `pid` on this host. */
export async function processState(pid: number): Promise<ProcessState> {
  if (!Number.isSafeInteger(pid) || pid < 1) {
    // kill(0, 0) and kill(-1, 0) would ask about whole process groups.
    throw new TypeError(`processState: pid must be a positive integer, got ${pid}`);
  }
  try {
    process.kill(pid, 0); // signal 0: existence check only
  } catch (error) {
    // EPERM: it exists, under another user.
    if (!hasCode(error, 'EPERM')) return 'gone';
  }
  const letter = await stateLetter(pid);
  return letter === 'gone' ? 'gone' : (DEAD_STATES[letter ?? ''] ?? 'running');
}

/** The state letter of /proc/<pid>/stat; 'gone' when the process vanished; undefined when unknown. */
async function stateLetter(pid: number): Promise<string | undefined> {
  if (process.platform !== 'linux') return undefined;
  let text: string;
  try {
    text = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch (error) {
    // It died and was reaped since kill() saw it; any other error (a /proc mounted with hidepid)
    // says nothing, and nothing known means running.
    return hasCode(error, 'ENOENT') ? 'gone' : undefined;
  }
  // "pid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
  const end = text.lastIndexOf(')');
  return end === -1 ? undefined : text.charAt(end + 2);
}
