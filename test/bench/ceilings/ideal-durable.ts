// The ceiling of a durable write (README, Performance): an ideal group commit. A node:http server
// that appends each request's body, behind a 16-byte frame header, to one file and answers only once
// a write covering it is durable. One write is in flight at a time; the requests that end meanwhile
// gather, and the moment it returns their frames go out as the next write. It keeps nothing else (no
// state, no index, no second record), so what it costs is the wire, Node's HTTP layer and the disk;
// whatever resapi is slower by is its own work per write. Its answer is resapi's own answer to the
// scenario's first request (answers.ts), the same status and bytes.
// It writes to the disk as resapi's journal does (CONVENTIONS.md#durability), or it would not be the
// limit: each group is one positional write durable on return (O_DSYNC), one trip through the thread
// pool instead of a write and an fdatasync, into a file prepared ahead with durable zeros, so that a
// write overwrites allocated blocks instead of growing the file and committing its new size too.
// Measured on the bench's disk, 8 s rounds of 32 connections taking turns, quiet machine: appending
// with write + fdatasync 42,600-45,800 writes a second; into prepared zeros 49,300-53,300; with
// O_DSYNC as well 56,100-58,000.
//
// Run as a process of its own: `node ideal-durable.js ANSWER.json FILE` prints `listening on URL`.
// `GET` (any path) answers its totals as JSON: writes acknowledged, durable writes, bytes appended.
import { constants, fdatasync, fdatasyncSync, openSync, write, writeSync } from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { crc32 } from 'node:zlib';
import { rawRequest, sendRaw } from '../load.js';
import { spawnModule, type Child } from '../servers.js';
import { readAnswers, writeAnswers, type Answer } from './answers.js';

const SELF = fileURLToPath(import.meta.url);
/** A frame: the body's length, its CRC-32 and the write's sequence number, then the body. */
const FRAME_HEADER = 16;
/** The file is prepared in steps of zeros this long, the next one once less than half a step is left. */
const ZERO_STEP = 4 << 20;
/** A step's zeros are written this much at a time. */
const ZERO_CHUNK = 256 << 10;

export interface IdealTotals {
  readonly writes: number;
  readonly syncs: number;
  readonly bytes: number;
}

/** Starts the ideal durable server answering `answer`, appending to `journal`. */
export function spawnIdealDurable(answer: Answer, answerFile: string, journal: string): Promise<Child> {
  writeAnswers(answerFile, new Map([['', answer]]));
  return spawnModule(SELF, [answerFile, journal]);
}

export async function idealTotals(server: Child): Promise<IdealTotals> {
  const answer = await sendRaw(server.url, rawRequest('GET', server.url, '/'));
  return JSON.parse(answer.body.toString('utf8')) as IdealTotals;
}

function serve(answerFile: string, journal: string): void {
  const answer = readAnswers(answerFile).get('') as Answer;
  // Each group is one positional write durable on return (O_DSYNC), as resapi's journal writes it.
  const fd = openSync(journal, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_DSYNC);
  const totals = { writes: 0, syncs: 0, bytes: 0 };
  // Zeros go through a descriptor of their own without O_DSYNC, in chunks, then one fdatasync.
  const zerosFd = openSync(journal, 'r+');
  const zeros = Buffer.alloc(ZERO_CHUNK);
  const writeZeros = (from: number, done: () => void): void => {
    let at = from;
    const next = (): void => {
      if (at === from + ZERO_STEP) {
        fdatasync(zerosFd, (syncError) => {
          if (syncError !== null) throw syncError;
          done();
        });
        return;
      }
      write(zerosFd, zeros, 0, ZERO_CHUNK, at, (writeError) => {
        if (writeError !== null) throw writeError;
        at += ZERO_CHUNK;
        next();
      });
    };
    next();
  };
  // The first step is made before it listens; the next ones past the frames, beside the group writes.
  for (let at = 0; at < ZERO_STEP; at += ZERO_CHUNK) writeSync(zerosFd, zeros, 0, ZERO_CHUNK, at);
  fdatasyncSync(zerosFd);
  let prepared = ZERO_STEP;
  let preparing = false;
  /** Where the next group's frames go. */
  let end = 0;
  /** A group that would reach the zeros still being written waits for them (never seen at bench speed). */
  let behindZeros: (() => void) | undefined;
  const prepare = (): void => {
    if (preparing || prepared - end >= ZERO_STEP / 2) return;
    preparing = true;
    const from = Math.max(prepared, end);
    writeZeros(from, () => {
      prepared = from + ZERO_STEP;
      preparing = false;
      const waiting = behindZeros;
      behindZeros = undefined;
      waiting?.();
      prepare();
    });
  };
  let gathering: Buffer[] = [];
  let waiting: ServerResponse[] = [];
  let syncing = false;
  let framed = 0;

  // Writes what has gathered (durable on return), then starts the next group before answering this one.
  const commit = (): void => {
    syncing = true;
    const frames = gathering.length === 1 ? (gathering[0] as Buffer) : Buffer.concat(gathering);
    if (preparing && end + frames.length > prepared) {
      gathering = [frames];
      behindZeros = commit;
      return;
    }
    const answers = waiting;
    gathering = [];
    waiting = [];
    const at = end;
    end += frames.length;
    write(fd, frames, 0, frames.length, at, (writeError) => {
      if (writeError !== null) throw writeError;
      totals.bytes += frames.length;
      totals.syncs++;
      prepare();
      if (gathering.length > 0) commit();
      else syncing = false;
      for (const response of answers) {
        response.writeHead(answer.status, answer.reason, answer.fields as string[]);
        response.end(answer.body);
      }
      totals.writes += answers.length;
    });
  };

  const server = createServer((request, response) => {
    if (request.method === 'GET') {
      const text = JSON.stringify(totals);
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks);
      const header = Buffer.allocUnsafe(FRAME_HEADER);
      header.writeUInt32LE(body.length, 0);
      header.writeUInt32LE(crc32(body), 4);
      header.writeDoubleLE(++framed, 8);
      gathering.push(header, body);
      waiting.push(response);
      if (!syncing) commit();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening on http://127.0.0.1:${(server.address() as AddressInfo).port}\n`);
  });
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
}

if (process.argv[1] === SELF) serve(process.argv[2] ?? '', process.argv[3] ?? '');
