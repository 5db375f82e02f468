// The file operations the file store needs, as a small interface with the real `node:fs`
// implementation. The store never imports `node:fs` itself, so tests can inject disk-full, EIO or
// read-only failures at any step (CONVENTIONS.md#durability: a failing disk) without touching a real disk's health.
//
// Every write goes through positional `write` calls: the journal always knows the offset of its last
// durable byte, so after a failed write it can truncate the torn tail away before writing again.
//
// What resapi creates is its owner's alone (CONVENTIONS.md#data-directory): directories 0700, files
// 0600. The journal holds subscription secrets and the dead letters hold received bodies. A umask can
// only take bits away, so these modes hold whatever the umask.
import { chmod, open, link, mkdir, readdir, rename, stat, unlink } from 'node:fs/promises';
import { constants, write as writeAt } from 'node:fs';

/** rwx for the owner, nothing for the group or others. */
export const DIR_MODE = 0o700;
/** rw for the owner, nothing for the group or others. */
export const FILE_MODE = 0o600;

/** How a file is opened. `createExclusive` fails with EEXIST when the path exists (O_EXCL). */
export type OpenMode = 'read' | 'readWrite' | 'createExclusive';

export interface OpenOptions {
  /**
   * Every write returns only once its bytes are durable, as after an fdatasync covering them (O_DSYNC,
   * POSIX "synchronized I/O data integrity completion"): one trip to the disk instead of a write and
   * then an fdatasync. A platform without O_DSYNC (Windows) opens the file without it, and the
   * handle's `writesAreDurable` says so, so the caller fdatasyncs.
   */
  readonly durableWrites?: boolean;
}

export interface FileHandleIO {
  /** True when each write is durable on return (opened with `durableWrites` where O_DSYNC exists). */
  readonly writesAreDurable?: boolean;
  /** Reads up to `length` bytes at `position`; returns how many were read (0 at end of file). */
  read(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  /**
   * Writes up to `length` bytes at `position`; returns how many were written (may be short). The
   * buffer is the caller's again once the promise settles: the journal frames its next group into it.
   */
  write(buffer: Uint8Array, offset: number, length: number, position: number): Promise<number>;
  /**
   * Writes `length` zero bytes at `position` and makes them durable, without `durableWrites` (the
   * zeros go to the page cache in chunks, then one fdatasync), so that later durable writes there
   * overwrite allocated blocks. Runs beside the handle's other writes; the caller keeps them out of
   * its range. Optional: a handle without it (a test double) has its file only appended to.
   */
  writeZeros?(position: number, length: number): Promise<void>;
  /** fdatasync: the data and the size are durable. */
  datasync(): Promise<void>;
  /** fsync: data and every metadata field are durable (used for new files before a rename). */
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  size(): Promise<number>;
  close(): Promise<void>;
}

export interface FileIO {
  open(path: string, mode: OpenMode, options?: OpenOptions): Promise<FileHandleIO>;
  rename(from: string, to: string): Promise<void>;
  /** Hard link; fails with EEXIST when `to` exists, which makes it an atomic "create if absent". */
  link(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  readdir(dir: string): Promise<string[]>;
  /** The size in bytes of the file at `path`. */
  fileSize(path: string): Promise<number>;
  /**
   * Creates the directory and its parents when missing (DIR_MODE). Says whether it made `dir`, and
   * the permission bits `dir` has now.
   */
  mkdir(dir: string): Promise<MadeDir>;
  /** Sets the permission bits of `path`. */
  chmod(path: string, mode: number): Promise<void>;
  /** fsyncs a directory, so a create, rename or unlink inside it survives a power loss. */
  syncDir(dir: string): Promise<void>;
}

export interface MadeDir {
  readonly created: boolean;
  /** The permission bits (`mode & 0o777`). */
  readonly mode: number;
}

const FLAGS: Readonly<Record<OpenMode, number>> = Object.freeze({
  read: constants.O_RDONLY,
  readWrite: constants.O_RDWR,
  createExclusive: constants.O_RDWR | constants.O_CREAT | constants.O_EXCL,
});

/** The zeros of one write of FileHandleIO.writeZeros: small enough to hold the file's lock only briefly. */
const ZERO_CHUNK_BYTES = 256 << 10;

/** The real implementation over `node:fs/promises`. */
export function nodeFileIO(): FileIO {
  return {
    async open(path, mode, options = {}) {
      // constants.O_DSYNC is undefined where the platform has none.
      const dsync = options.durableWrites === true && mode !== 'read' ? (constants.O_DSYNC ?? 0) : 0;
      const handle = await open(path, FLAGS[mode] | dsync, FILE_MODE);
      return {
        writesAreDurable: dsync !== 0,
        read: async (buffer, offset, length, position) =>
          (await handle.read(buffer, offset, length, position)).bytesRead,
        // The callback form on the handle's descriptor: FileHandle#write makes a promise request, which
        // allocates a typed array for stat results on every call, and returns an object to unwrap. A
        // journal write is made per group commit; the handle is never closed while one is pending.
        write: (buffer, offset, length, position) =>
          new Promise((resolve, reject) => {
            writeAt(handle.fd, buffer, offset, length, position, (error, written) => {
              if (error === null) resolve(written);
              else reject(error);
            });
          }),
        writeZeros: mode === 'read' ? undefined : (position, length) => writeZeros(path, position, length),
        datasync: () => handle.datasync(),
        sync: () => handle.sync(),
        truncate: (length) => handle.truncate(length),
        size: async () => (await handle.stat()).size,
        close: () => handle.close(),
      };
    },
    rename: (from, to) => rename(from, to),
    link: (from, to) => link(from, to),
    unlink: (path) => unlink(path),
    readdir: (dir) => readdir(dir),
    fileSize: async (path) => (await stat(path)).size,
    mkdir: async (dir) => {
      // Recursive mkdir returns the first directory it made, undefined when `dir` was there already.
      const made = await mkdir(dir, { recursive: true, mode: DIR_MODE });
      return { created: made !== undefined, mode: (await stat(dir)).mode & 0o777 };
    },
    chmod: (path, mode) => chmod(path, mode),
    async syncDir(dir) {
      const handle = await open(dir, constants.O_RDONLY);
      try {
        await handle.sync();
      } finally {
        await handle.close();
      }
    },
  };
}

/** FileHandleIO.writeZeros, on a descriptor of its own: without O_DSYNC, so one fdatasync covers every chunk. */
async function writeZeros(path: string, position: number, length: number): Promise<void> {
  const handle = await open(path, constants.O_WRONLY);
  try {
    const zeros = Buffer.alloc(Math.min(length, ZERO_CHUNK_BYTES));
    for (let done = 0; done < length; ) {
      const { bytesWritten } = await handle.write(zeros, 0, Math.min(zeros.length, length - done), position + done);
      if (bytesWritten <= 0) throw new Error(`short write: ${done} of ${length} zero bytes`);
      done += bytesWritten;
    }
    await handle.datasync();
  } finally {
    await handle.close();
  }
}

/** Writes the whole range, looping over short writes. */
export async function writeFully(handle: FileHandleIO, buffer: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < buffer.length) {
    const written = await handle.write(buffer, done, buffer.length - done, position + done);
    if (written <= 0) throw new Error(`short write: ${done} of ${buffer.length} bytes`);
    done += written;
  }
}

/** Reads the whole range (or up to end of file); returns how many bytes were read. */
export async function readFully(
  handle: FileHandleIO,
  buffer: Uint8Array,
  length: number,
  position: number,
): Promise<number> {
  let done = 0;
  while (done < length) {
    const read = await handle.read(buffer, done, length - done, position + done);
    if (read === 0) break;
    done += read;
  }
  return done;
}

/** A short, log-friendly description of an I/O error: its code when Node gave one. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === undefined ? error.message : `${code}: ${error.message}`;
  }
  return String(error);
}

/** True when the error is a Node system error with this code (ENOENT, EEXIST, ...). */
export function hasCode(error: unknown, code: string): boolean {
  return error instanceof Error && (error as NodeJS.ErrnoException).code === code;
}
