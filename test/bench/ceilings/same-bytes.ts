// The ceiling of a read (README, Performance): a bare node:http server that answers each request of a
// read scenario with resapi's own answer to that exact request, captured once beforehand
// (answers.ts): the same status line, header fields and body, so only Date differs. Per request it
// does one Map lookup by the request target and the If-None-Match value, and writes the answer; a
// 304 is the same 304 head, a page by @nextLink the same page by its path. Whatever resapi is slower
// by is its own work per request, not the wire's nor Node's HTTP layer's.
//
// Run as a process of its own: `node same-bytes.js ANSWERS.json` prints `listening on URL`. A request
// it holds no answer for gets a 404, which the load generator counts as a failure.
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { spawnModule, type Child } from '../servers.js';
import { answerKey, readAnswers, writeAnswers, type Answer } from './answers.js';
import { listenOnLoopback } from './limit-server.js';

const SELF = fileURLToPath(import.meta.url);

/** Starts the same-bytes server for `answers`, kept in `file` for the child to read. */
export function spawnSameBytes(answers: ReadonlyMap<string, Answer>, file: string): Promise<Child> {
  writeAnswers(file, answers);
  return spawnModule(SELF, [file]);
}

function serve(file: string): void {
  const answers = readAnswers(file);
  const server = createServer((request, response) => {
    const conditional = request.headers['if-none-match'];
    const answer = answers.get(answerKey(request.url ?? '', conditional));
    if (answer === undefined) {
      response.writeHead(404, { 'Content-Length': '0' }).end();
      return;
    }
    response.writeHead(answer.status, answer.reason, answer.fields as string[]);
    response.end(answer.body);
  });
  listenOnLoopback(server);
}

if (process.argv[1] === SELF) serve(process.argv[2] ?? '');
