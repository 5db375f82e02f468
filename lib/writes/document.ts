// What a stored document must be (CONVENTIONS.md#items, #json-bodies): a JSON object, nested at most
// MAX_JSON_DEPTH levels, whose numbers JSON can carry (JSON.parse turns 1e400 into Infinity, which
// JSON.stringify would silently store as null, and JSON.stringify writes -0 as 0), that carries "id"
// equal to its path id, and that matches the collection's declared schema
// (CONVENTIONS.md#configuration-file: collections.<name>.schema). Pure: every write path (PUT, POST,
// bulk rows, --seed) and the JSON body parser ask these same questions.
import { escapePointerToken } from '../json-pointer.js';
import { NEGATIVE_ZERO, NUMBER_OUT_OF_RANGE } from '../json-text.js';
import type { CollectionConfig, FieldType } from '../config.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../json.js';
import { problem, type Problem, type ProblemItem } from '../protocol/problem.js';

/**
 * Deepest nesting accepted: deep enough for real documents, shallow enough that no recursive consumer can
 * overflow its stack.
 */
export const MAX_JSON_DEPTH = 256;

/**
 * The first thing wrong with the shape of `value` as a stored document, pointing at it (RFC 6901),
 * or undefined. Walks without recursion, so 100,000 levels are a problem, not a stack overflow.
 * Every write asks this of a document that is almost always sound: a first walk only says whether it
 * is, building no pointers, and the walk that names the problem runs only when there is one.
 */
export function shapeProblem(value: unknown): ProblemItem | undefined {
  if (isJsonObject(value) && isSound(value)) return undefined;
  return firstProblem(value);
}

/**
 * The answer of firstProblem, without saying where: no number JSON cannot carry, no nesting too deep.
 * It allocates nothing (a `for in` over a parsed object reads its keys from V8's enum cache), and its
 * recursion stops at MAX_JSON_DEPTH levels, so however deep the value, the stack stays bounded.
 */
function isSound(value: JsonObject | JsonValue[], depth = 1): boolean {
  if (depth > MAX_JSON_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      if (!isSoundChild(value[index] as JsonValue, depth)) return false;
    }
    return true;
  }
  for (const key in value) {
    if (!isSoundChild(value[key] as JsonValue, depth)) return false;
  }
  return true;
}

function isSoundChild(child: JsonValue, depth: number): boolean {
  if (typeof child === 'number') return Number.isFinite(child) && !Object.is(child, -0);
  return typeof child !== 'object' || child === null || isSound(child, depth + 1);
}

function firstProblem(value: unknown): ProblemItem | undefined {
  if (!isJsonObject(value)) return { pointer: '', detail: 'expected an object' };
  const stack: { value: JsonValue; pointer: string; depth: number }[] = [{ value, pointer: '', depth: 1 }];
  while (stack.length > 0) {
    const { value: current, pointer, depth } = stack.pop() as { value: JsonValue; pointer: string; depth: number };
    if (typeof current === 'number' && !Number.isFinite(current)) return { pointer, detail: NUMBER_OUT_OF_RANGE };
    // JSON writes -0 as 0: stored, it would come back as another number (CONVENTIONS.md#json-bodies).
    if (Object.is(current, -0)) return { pointer, detail: NEGATIVE_ZERO };
    if (typeof current !== 'object' || current === null) continue;
    if (depth > MAX_JSON_DEPTH) return { pointer, detail: `nested deeper than ${MAX_JSON_DEPTH} levels` };
    const entries: [string, JsonValue][] = Array.isArray(current)
      ? current.map((item, index) => [String(index), item])
      : Object.entries(current);
    for (const [key, child] of entries) {
      stack.push({ value: child, pointer: `${pointer}/${escapePointerToken(key)}`, depth: depth + 1 });
    }
  }
  return undefined;
}

/** The shape problem of a document as a 400 problem. */
export function documentShapeProblem(value: unknown): Problem | undefined {
  const item = shapeProblem(value);
  if (item === undefined) return undefined;
  const detail = item.pointer === '' ? 'The body must be a JSON object.' : item.detail;
  return problem('invalid-body', detail, { errors: [item] });
}

/** The declared schema: only declared fields, each of its declared type or null. */
export function checkSchema(doc: JsonObject, config: CollectionConfig | undefined): Problem | undefined {
  const schema = config?.schema;
  if (schema === undefined) return undefined;
  const errors: { pointer: string; detail: string }[] = [];
  for (const [field, value] of Object.entries(doc)) {
    if (field === 'id') continue;
    const declared: FieldType | undefined = Object.hasOwn(schema, field) ? schema[field] : undefined;
    const pointer = `/${escapePointerToken(field)}`;
    if (declared === undefined) errors.push({ pointer, detail: 'not a field of this collection' });
    else if (value !== null && typeOf(value) !== declared) errors.push({ pointer, detail: `must be ${declared}` });
  }
  if (errors.length === 0) return undefined;
  return problem('invalid-body', 'The body does not match the collection schema.', { errors });
}

/** The stored object always carries "id" equal to the path id (CONVENTIONS.md#items). */
export function checkId(doc: JsonObject, id: string): Problem | undefined {
  if (doc['id'] === id) return undefined;
  const detail = `The body's "id" must equal the id in the path ('${id}') or be left out.`;
  return problem('invalid-body', detail, { errors: [{ pointer: '/id', detail: `must be "${id}"` }] });
}

function typeOf(value: JsonValue): string {
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
