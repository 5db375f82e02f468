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
import { fileURLToPath } from 'node:url';
import { spawnModule, type Child } from '../servers.js';
import { readAnswers, writeAnswers, type Answer } from './answers.js';
import { GroupCommit, type GroupTotals } from './group-commit.js';
import { answerTotals, limitTotals, listenOnLoopback, readBody } from './limit-server.js';

const SELF = fileURLToPath(import.meta.url);

export type IdealTotals = GroupTotals;

/** Starts the ideal durable server answering `answer`, appending to `journal`. */
export function spawnIdealDurable(answer: Answer, answerFile: string, journal: string): Promise<Child> {
  writeAnswers(answerFile, new Map([['', answer]]));
  return spawnModule(SELF, [answerFile, journal]);
}

export function idealTotals(server: Child): Promise<IdealTotals> {
  return limitTotals<IdealTotals>(server.url);
}

function serve(answerFile: string, journal: string): void {
  const answer = readAnswers(answerFile).get('') as Answer;
  const group = new GroupCommit(journal);
  const server = createServer((request, response) => {
    if (request.method === 'GET') {
      answerTotals(response, group.totals);
      return;
    }
    readBody(request, (body) => {
      group.append(body, () => {
        response.writeHead(answer.status, answer.reason, answer.fields as string[]);
        response.end(answer.body);
      });
    });
  });
  listenOnLoopback(server);
}

if (process.argv[1] === SELF) serve(process.argv[2] ?? '', process.argv[3] ?? '');
