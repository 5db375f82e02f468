// The real file I/O with switchable failures, for tests of what a failing disk does to the store
// and to the HTTP answers (README, Durability: a failing disk).
import type { FileHandleIO, FileIO } from '../../lib/store/fs-io.js';
import { nodeFileIO } from '../../lib/store/fs-io.js';

export type Operation = 'write' | 'datasync' | 'truncate' | 'open';

/** The real file I/O with switchable failures; a failing write first writes half its bytes. */
export class FaultyIO implements FileIO {
  readonly failing = new Map<Operation, string>();
  private readonly real = nodeFileIO();

  /** Fails `operation` on files whose name contains `where` with the errno `code`. */
  fail(operation: Operation, code: string, where = 'journal-'): void {
    this.failing.set(operation, `${code}|${where}`);
  }

  heal(): void {
    this.failing.clear();
  }

  private check(operation: Operation, path: string): void {
    const rule = this.failing.get(operation);
    if (rule === undefined) return;
    const [code, where] = rule.split('|') as [string, string];
    if (path.includes(where)) throw Object.assign(new Error(`injected ${code} on ${operation}`), { code });
  }

  async open(path: string, mode: Parameters<FileIO['open']>[1]): Promise<FileHandleIO> {
    this.check('open', path);
    const handle = await this.real.open(path, mode);
    return {
      read: (buffer, offset, length, position) => handle.read(buffer, offset, length, position),
      write: async (buffer, offset, length, position) => {
        try {
          this.check('write', path);
        } catch (error) {
          await handle.write(buffer, offset, Math.ceil(length / 2), position);
          throw error;
        }
        return handle.write(buffer, offset, length, position);
      },
      datasync: async () => {
        this.check('datasync', path);
        await handle.datasync();
      },
      sync: () => handle.sync(),
      truncate: async (length) => {
        this.check('truncate', path);
        await handle.truncate(length);
      },
      size: () => handle.size(),
      close: () => handle.close(),
    };
  }

  rename(from: string, to: string): Promise<void> {
    return this.real.rename(from, to);
  }

  link(from: string, to: string): Promise<void> {
    return this.real.link(from, to);
  }

  unlink(path: string): Promise<void> {
    return this.real.unlink(path);
  }

  readdir(dir: string): Promise<string[]> {
    return this.real.readdir(dir);
  }

  fileSize(path: string): Promise<number> {
    return this.real.fileSize(path);
  }

  mkdir(dir: string): ReturnType<FileIO['mkdir']> {
    return this.real.mkdir(dir);
  }

  chmod(path: string, mode: number): Promise<void> {
    return this.real.chmod(path, mode);
  }

  syncDir(dir: string): Promise<void> {
    return this.real.syncDir(dir);
  }
}
