// Answers captured from resapi for the ceiling servers of the benchmark (README, Performance): each is
// resapi's own status line, header fields and body for one exact request, sent once before the load.
// A ceiling server replays them, so it writes the same bytes on the wire as resapi does, except the
// fields Node writes per connection and per second (Date, Connection, Keep-Alive), which Node's
// HTTP layer then writes for the ceiling exactly as it does for resapi.
import { readFileSync, writeFileSync } from 'node:fs';
import { sendRaw } from '../load.js';

/** Fields Node's HTTP layer writes itself on every answer (RFC 9110 §6.6.1 Date, §7.6.1 Connection). */
const NODE_WRITES = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

export interface Answer {
  readonly status: number;
  readonly reason: string;
  /** Names and values, flat, in resapi's order: what `writeHead` takes as an array. */
  readonly fields: readonly string[];
  readonly body: Buffer;
}

/** What a replayed answer is found by: the request target and the one conditional field the read scenarios send. */
export function answerKey(target: string, ifNoneMatch: string | undefined): string {
  return ifNoneMatch === undefined ? target : `${target}\n${ifNoneMatch}`;
}

/** The key of a raw request (its request line's target and its If-None-Match, if any). */
export function requestKey(request: Buffer): string {
  const head = request.subarray(0, request.indexOf('\r\n\r\n')).toString('latin1');
  const target = head.slice(head.indexOf(' ') + 1, head.indexOf(' HTTP/1.1'));
  const conditional = /\r\nIf-None-Match: ([^\r]*)/i.exec(head)?.[1];
  return answerKey(target, conditional);
}

/** Sends each distinct request once to `url` and keeps its answer by the request's key. */
export async function captureAnswers(url: URL, requests: readonly Buffer[]): Promise<Map<string, Answer>> {
  const answers = new Map<string, Answer>();
  for (const request of requests) {
    const key = requestKey(request);
    if (!answers.has(key)) answers.set(key, await captureAnswer(url, request));
  }
  return answers;
}

export async function captureAnswer(url: URL, request: Buffer): Promise<Answer> {
  const raw = await sendRaw(url, request);
  const fields = raw.fields.filter(([name]) => !NODE_WRITES.has(name.toLowerCase())).flat();
  return { status: raw.status, reason: raw.reason, fields, body: raw.body };
}

export function writeAnswers(path: string, answers: ReadonlyMap<string, Answer>): void {
  const entries = [...answers].map(([key, answer]) => [key, { ...answer, body: answer.body.toString('base64') }]);
  writeFileSync(path, JSON.stringify(entries));
}

export function readAnswers(path: string): Map<string, Answer> {
  const entries = JSON.parse(readFileSync(path, 'utf8')) as [string, Omit<Answer, 'body'> & { body: string }][];
  return new Map(entries.map(([key, answer]) => [key, { ...answer, body: Buffer.from(answer.body, 'base64') }]));
}
