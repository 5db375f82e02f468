// Side logs: append-only files of JSON lines next to the store (a dead event is a line in
// data-dir/dead-letter.jsonl, CONVENTIONS.md#inbox-retries-and-dead-letters; a dead delivery one in
// data-dir/outbox-dead-letter.jsonl, CONVENTIONS.md#delivery-retries). They are for people and
// tools (`tail -f`, `jq`), so each entry is one line of JSON; the store's own records stay the truth.
//
// Durability follows the journal's rules: a line is acknowledged only once it is written and
// fdatasynced; a new file's directory entry is fsynced before its first line counts; after a failed
// write the file is truncated back to its last acknowledged byte before the next append, and a line
// torn by a crash (no newline at the end of the file) is cut off when the file is next opened, so a
// torn fragment can never merge with the next line. Appends to one log are serial.
import { join } from 'node:path';
import { isJsonObject, type JsonObject } from '../json.js';
import type { FileHandleIO, FileIO } from './fs-io.js';
import { describeError, hasCode, readFully, writeFully } from './fs-io.js';
import { SIDE_LOG_NAME, type SideLogResult } from './types.js';

const NEWLINE = 0x0a;
const TAIL_CHUNK = 64 * 1024;

export interface SideLogs {
  append(name: string, entry: JsonObject): Promise<SideLogResult>;
  read(name: string): Promise<JsonObject[]>;
  close(): Promise<void>;
}

function sideLogFile(name: string): string {
  if (typeof name !== 'string' || !SIDE_LOG_NAME.test(name)) {
    throw new TypeError(`side log name must match ${SIDE_LOG_NAME}, got ${JSON.stringify(name)}`);
  }
  return `${name}.jsonl`;
}

/** Side logs kept in memory (the memory store): same names, same entries, no files. */
export class MemorySideLogs implements SideLogs {
  private readonly logs = new Map<string, string[]>();

  append(name: string, entry: JsonObject): Promise<SideLogResult> {
    sideLogFile(name);
    const lines = this.logs.get(name) ?? [];
    lines.push(JSON.stringify(entry));
    this.logs.set(name, lines);
    return Promise.resolve({ ok: true });
  }

  read(name: string): Promise<JsonObject[]> {
    sideLogFile(name);
    return Promise.resolve((this.logs.get(name) ?? []).map((line) => JSON.parse(line) as JsonObject));
  }

  async close(): Promise<void> {}
}

interface OpenLog {
  handle: FileHandleIO;
  /** End of the last acknowledged line. */
  offset: number;
  damaged: boolean;
}

/** Side logs as files in the data dir. */
export class FileSideLogs implements SideLogs {
  private readonly open = new Map<string, OpenLog>();
  private readonly tails = new Map<string, Promise<unknown>>();

  constructor(
    private readonly io: FileIO,
    private readonly dir: string,
  ) {}

  append(name: string, entry: JsonObject): Promise<SideLogResult> {
    const path = join(this.dir, sideLogFile(name));
    const line = Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8');
    return this.serially(name, async () => {
      try {
        const log = await this.opened(name, path);
        if (log.damaged) {
          await log.handle.truncate(log.offset);
          log.damaged = false;
        }
        try {
          await writeFully(log.handle, line, log.offset);
          await log.handle.datasync();
        } catch (error) {
          log.damaged = true;
          throw error;
        }
        log.offset += line.length;
        return { ok: true };
      } catch (error) {
        return { ok: false, detail: `side log ${path}: ${describeError(error)}` };
      }
    });
  }

  read(name: string): Promise<JsonObject[]> {
    const path = join(this.dir, sideLogFile(name));
    return this.serially(name, async () => {
      let handle: FileHandleIO;
      try {
        handle = await this.io.open(path, 'read');
      } catch (error) {
        if (hasCode(error, 'ENOENT')) return [];
        throw error;
      }
      try {
        const size = await handle.size();
        const bytes = Buffer.alloc(size);
        await readFully(handle, bytes, size, 0);
        return parseLines(bytes);
      } finally {
        await handle.close();
      }
    });
  }

  async close(): Promise<void> {
    await Promise.all([...this.tails.values()]);
    for (const log of this.open.values()) await log.handle.close();
    this.open.clear();
  }

  /** Runs `task` after every earlier task on the same log, whatever they resolved to. */
  private serially<T>(name: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(name) ?? Promise.resolve();
    const next = previous.then(task, task);
    this.tails.set(name, next.catch(() => undefined));
    return next;
  }

  private async opened(name: string, path: string): Promise<OpenLog> {
    const existing = this.open.get(name);
    if (existing !== undefined) return existing;
    let handle: FileHandleIO;
    try {
      handle = await this.io.open(path, 'readWrite');
    } catch (error) {
      if (!hasCode(error, 'ENOENT')) throw error;
      handle = await this.io.open(path, 'createExclusive');
      await this.io.syncDir(this.dir);
    }
    const size = await handle.size();
    const offset = await lastLineEnd(handle, size);
    if (offset !== size) {
      await handle.truncate(offset);
      await handle.datasync();
    }
    const log: OpenLog = { handle, offset, damaged: false };
    this.open.set(name, log);
    return log;
  }
}

/** The offset just past the last newline (0 when there is none): where whole lines end. */
async function lastLineEnd(handle: FileHandleIO, size: number): Promise<number> {
  let end = size;
  const chunk = Buffer.alloc(TAIL_CHUNK);
  while (end > 0) {
    const start = Math.max(0, end - TAIL_CHUNK);
    const length = end - start;
    await readFully(handle, chunk, length, start);
    const at = chunk.subarray(0, length).lastIndexOf(NEWLINE);
    if (at !== -1) return start + at + 1;
    end = start;
  }
  return 0;
}

/** Whole lines that hold a JSON object; a line that does not (torn or edited by hand) is skipped. */
function parseLines(bytes: Buffer): JsonObject[] {
  const entries: JsonObject[] = [];
  let start = 0;
  for (let at = bytes.indexOf(NEWLINE); at !== -1; at = bytes.indexOf(NEWLINE, start)) {
    const value = parseLine(bytes.subarray(start, at));
    if (value !== undefined) entries.push(value);
    start = at + 1;
  }
  return entries;
}

function parseLine(line: Buffer): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(line.toString('utf8'));
    return isJsonObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
