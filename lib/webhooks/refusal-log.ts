// The log lines of refused deliveries (CONVENTIONS.md#receiving-sources): a refusal says why in its
// problem and in one log line, never which secret. Anyone can send a receiving path anything, so the
// log must not grow with what an anonymous sender sends.
//
// resapi's decision: at most one line per source and reason per minute. The reasons are the fixed
// phrases of the schemes (lib/webhooks/schemes/*.ts), never text the sender chose, so the lines are
// few and the memory they take is bounded by the sources times the reasons. A refusal inside the
// minute of the last line for its reason is counted, and the next line for that reason says how many
// there were (`alsoRefused`). The first refusal of a reason always has its line, with its request id.
import type { Clock } from '../clock.js';
import type { Logger } from '../log.js';

const INTERVAL_MS = 60_000;

interface LastLine {
  at: number;
  suppressed: number;
}

export class RefusalLog {
  private readonly last = new Map<string, LastLine>();

  constructor(
    private readonly log: Logger,
    private readonly clock: Pick<Clock, 'now'>,
    private readonly intervalMs = INTERVAL_MS,
  ) {}

  /** Logs the refusal, unless a line for the same source and reason was written within the interval. */
  refused(source: string, status: number, reason: string, requestId: string): void {
    const key = `${source}\n${reason}`;
    const now = this.clock.now();
    const last = this.last.get(key);
    if (last !== undefined && now - last.at < this.intervalMs) {
      last.suppressed += 1;
      return;
    }
    const alsoRefused = last?.suppressed ?? 0;
    this.last.set(key, { at: now, suppressed: 0 });
    const fields = { source, status, reason, requestId, ...(alsoRefused > 0 ? { alsoRefused } : {}) };
    this.log('warn', `webhook delivery refused: ${reason}`, fields);
  }
}
