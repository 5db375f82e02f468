// What a check expects of a response, as assertions that fail the check with what was seen (a
// status, a field, a few bytes of the body): the "on failure, what was seen" of each report line.
import type { JsonObject } from '../json.js';
import type { ProbeResponse } from './probe.js';
import type { PrerequisiteName } from './prerequisites.js';
import { CheckBlocked, CheckFailed, type CheckContext } from './types.js';

/** Bytes of a body quoted in a failure. */
const QUOTED = 160;

/** A response in a few words: its status, its Content-Type, the start of its body. */
export function seen(response: ProbeResponse): string {
  const type = response.header('content-type');
  const body = response.text.length > QUOTED ? `${response.text.slice(0, QUOTED)}…` : response.text;
  const typed = type === undefined ? '' : ` ${type}`;
  const quoted = body === '' ? '' : ` ${JSON.stringify(body)}`;
  return `${response.status}${typed}${quoted}`;
}

export function expectStatus(response: ProbeResponse, ...expected: number[]): void {
  if (!expected.includes(response.status)) {
    throw new CheckFailed(`expected ${expected.join(' or ')}, got ${seen(response)}`);
  }
}

/** The field's value; fails when it is absent. */
export function expectHeader(response: ProbeResponse, name: string): string {
  const value = response.header(name);
  if (value === undefined) throw new CheckFailed(`no ${name} field in ${seen(response)}`);
  return value;
}

export function expectNoHeader(response: ProbeResponse, name: string): void {
  const value = response.header(name);
  if (value !== undefined) throw new CheckFailed(`${name}: ${value}, where none belongs`);
}

/** The body as a JSON object; fails when it is not one. */
export function expectObject(response: ProbeResponse): JsonObject {
  const body = response.json();
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new CheckFailed(`expected a JSON object, got ${seen(response)}`);
  }
  return body as JsonObject;
}

/**
 * The envelope's `value` array; fails when the body is not `{ "value": [...] }`
 * (CONVENTIONS.md#collection-envelope).
 */
export function expectEnvelope(
  response: ProbeResponse,
): { value: JsonObject[]; next: string | undefined; body: JsonObject } {
  const body = response.json();
  if (Array.isArray(body)) throw new CheckFailed(`a bare array: ${seen(response)}`);
  const object = expectObject(response);
  const value = object['value'];
  if (!Array.isArray(value)) throw new CheckFailed(`no "value" array in ${seen(response)}`);
  const next = object['@nextLink'];
  if (next !== undefined && typeof next !== 'string') {
    throw new CheckFailed(`"@nextLink" is not a string: ${JSON.stringify(next)}`);
  }
  return { value: value as JsonObject[], next, body: object };
}

/**
 * The status a rule asks for, and a problem document with it, unless errors/problem-document already
 * found the server's errors are not problem documents: then only the status is this check's to judge,
 * and the format is not failed a second time (one root cause, one FAIL).
 */
export async function expectProblem(c: CheckContext, response: ProbeResponse, status: number): Promise<JsonObject> {
  expectStatus(response, status);
  if (await c.holds('problem')) return expectProblemDocument(response, status);
  const body = response.json();
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as JsonObject) : {};
}

/** A problem document (RFC 9457) with type, title and status; fails otherwise. */
export function expectProblemDocument(response: ProbeResponse, status: number): JsonObject {
  expectStatus(response, status);
  const type = response.header('content-type') ?? '';
  if (!/^application\/problem\+json\s*(;|$)/i.test(type)) {
    throw new CheckFailed(`Content-Type ${type || '(none)'} for a ${status}, not application/problem+json`);
  }
  const body = expectObject(response);
  for (const member of ['type', 'title', 'status']) {
    if (body[member] === undefined) throw new CheckFailed(`the problem has no "${member}": ${seen(response)}`);
  }
  if (body['status'] !== status) {
    throw new CheckFailed(`the problem says status ${JSON.stringify(body['status'])} on a ${status}`);
  }
  return body;
}

/**
 * The response, unless it is a 404 or 405 (the route is not there) and the prerequisite that
 * establishes the route does not hold: then the check has nothing to judge and is blocked by it.
 */
export async function routeOrBlocked(
  c: CheckContext,
  response: ProbeResponse,
  prerequisite: PrerequisiteName,
): Promise<ProbeResponse> {
  if ((response.status === 404 || response.status === 405) && !(await c.holds(prerequisite))) {
    throw new CheckBlocked(prerequisite);
  }
  return response;
}

export function expectThat(condition: boolean, failure: string): void {
  if (!condition) throw new CheckFailed(failure);
}

/** The names a Vary field lists, lowercased. */
export function varyNames(response: ProbeResponse): Set<string> {
  const names = (response.header('vary') ?? '').split(',').map((name) => name.trim().toLowerCase());
  return new Set(names.filter((name) => name !== ''));
}
