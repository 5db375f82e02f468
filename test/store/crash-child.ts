// Child process for crash.test.ts and lock.test.ts (not a test file). Modes:
//
//   write <dir> <writers> <snapshotThresholdBytes> <run> [zeros]
//     Opens a FileStore and runs <writers> concurrent loops, each committing batches that must be
//     all-or-nothing: odd batches put 2 rows, even ones put 2 rows and replace the writer's counter
//     `counters/w<w>` under a version expectation (3 mutations). Row ids are `<run>.<w>.<n>.<part>`.
//     After a batch is acknowledged (its promise resolved ok) it prints `ack <run>.<w>.<n> <parts>`;
//     stdout to a pipe is synchronous on Linux, so a printed line was acknowledged before any kill.
//     With `zeros`, it also prints `zeros <position> <length>` as each step of zeros prepared ahead
//     of the journal starts, so the parent can kill it while one is being written.
//   hold <dir>
//     Opens the store and keeps it (and its lock) until killed. Prints `ready <pid>`.
//
// Either mode exits 1 with the store's message on stderr when the store cannot open, as the server
// must (CONVENTIONS.md#data-directory).
import { openFileStore } from '../../lib/store/file.js';
import type { FileStore } from '../../lib/store/file.js';
import type { Mutation } from '../../lib/store/types.js';
import type { FileIO } from '../../lib/store/fs-io.js';
import { nodeFileIO } from '../../lib/store/fs-io.js';

const [mode, dir, writersText, thresholdText, run, announce] = process.argv.slice(2);

/** The real file I/O, printing a line as each step of zeros starts. */
function announcingZeros(real: FileIO): FileIO {
  return {
    ...real,
    open: async (path, openMode, options) => {
      const handle = await real.open(path, openMode, options);
      const writeZeros = handle.writeZeros;
      if (writeZeros === undefined) return handle;
      return {
        ...handle,
        writeZeros: (position, length) => {
          process.stdout.write(`zeros ${position} ${length}\n`);
          return writeZeros(position, length);
        },
      };
    },
  };
}

async function main(): Promise<void> {
  // `node --test build/test` runs every .js under a test/ directory, this one included: without
  // arguments there is nothing to do.
  if (mode === undefined) return;
  if (dir === undefined || (mode !== 'write' && mode !== 'hold')) {
    process.stderr.write('usage: crash-child.js write <dir> <writers> <threshold> | hold <dir>\n');
    process.exit(2);
  }
  const opened = await openFileStore({
    dir,
    ...(announce === 'zeros' ? { io: announcingZeros(nodeFileIO()) } : {}),
    snapshotThresholdBytes: mode === 'write' ? Number(thresholdText) : undefined,
    log: (level, message, fields) => {
      if (level !== 'info') process.stderr.write(`${level}: ${message} ${JSON.stringify(fields ?? {})}\n`);
    },
  });
  if (!opened.ok) {
    process.stderr.write(`${opened.message}\n`);
    process.exit(1);
  }
  process.stdout.write(`ready ${process.pid}\n`);
  if (mode === 'hold') {
    setInterval(() => {}, 60_000);
    return;
  }
  const writers = Number(writersText);
  await Promise.all(Array.from({ length: writers }, (_, w) => writeForever(opened.store, `${run}.${w}`, `w${w}`)));
}

async function writeForever(store: FileStore, writer: string, counterId: string): Promise<never> {
  for (let n = 1; ; n++) {
    const batch = `${writer}.${n}`;
    const parts = n % 2 === 0 ? 3 : 2;
    const mutations: Mutation[] = [0, 1].map((part) => ({
      kind: 'put',
      collection: 'rows',
      id: `${batch}.${part}`,
      doc: { batch, parts, pad: 'p'.repeat((n * 37 + part * 11) % 200) },
      expect: { absent: true },
    }));
    if (parts === 3) {
      const counter = store.get('counters', counterId);
      mutations.push({
        kind: 'put',
        collection: 'counters',
        id: counterId,
        doc: { batch, n },
        expect: counter === undefined ? { absent: true } : { version: counter.version },
      });
    }
    const result = await store.commit({ mutations });
    if (result.ok) process.stdout.write(`ack ${batch} ${parts}\n`);
    else process.stderr.write(`commit failed: ${JSON.stringify(result)}\n`);
  }
}

void main();
