// The ceiling of a durable write (README, Performance): an ideal group commit. A node:http server
// that appends each request's body, behind a 16-byte frame header, to one file and answers only once
// a write covering it is durable. One write is in flight at a time; the requests that end meanwhile
// gather, and the moment it returns their frames go out as the next write. It keeps nothing else (no
// state, no index, no second record), so what it costs is the wire, Node's HTTP layer and the disk;
// whatever resapi is slower by is its own work per write. Its answer is resapi's own answer to the
// scenario's first request (answers.ts), the same status and bytes.
// It writes to the disk as resapi's journal does, or it would not be the limit (group-commit.ts).
//
// Run as a process of its own: `node ideal-durable.js ANSWER.json FILE` prints `listening on URL`.
// `GET` (any path) answers its totals as JSON: writes acknowledged, durable writes, bytes appended.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { rawRequest, sendRaw } from '../load.js';
import { spawnModule, type Child } from '../servers.js';
import { readAnswers, writeAnswers, type Answer } from './answers.js';
import { GroupCommit, type GroupTotals } from './group-commit.js';

const SELF = fileURLToPath(import.meta.url);

export type IdealTotals = GroupTotals;

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
  const group = new GroupCommit(journal);
  const server = createServer((request, response) => {
    if (request.method === 'GET') {
      const text = JSON.stringify(group.totals);
      response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) }).end(text);
      return;
    }
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      group.append(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks), () => {
        response.writeHead(answer.status, answer.reason, answer.fields as string[]);
        response.end(answer.body);
      });
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
