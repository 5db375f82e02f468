// `--seed PATH` (CONVENTIONS.md#command-line): a folder of JSON files, one array per collection named
// after the file (products.json → /products), or a json-server style db.json
// ({ "products": [...], ... }), loaded into a store that is still empty, in one atomic batch. "Still
// empty" means never seeded and never written: loading leaves a marker record in the `$meta` space, so
// sample data that a user deleted does not come back on the next `npm start`; a load that is skipped
// for that reason says so (seedSkipReason), because a user who changed the sample files would
// otherwise wonder why nothing changed.
//
// Seed files are read as every write path reads JSON (json-text.ts): a number a double cannot hold
// exactly refuses the start (two ids 2^53 and 2^53+1 would otherwise collide), naming the file, the
// offset and the pointer.
// json-server data often has numeric ids; a path id is text, so `1` is stored as "1". An item with
// no id gets a generated one. A db.json member that is not an array (json-server's own example has
// `"profile": { ... }`, a singular resource resapi has no place for) is skipped with a note rather
// than refusing the whole file. Everything else goes through the write path, so anything a PUT of the
// same document would be refused for refuses the start, naming the file and item, rather than loading
// part of it. readSeed and checkSeed need no store, so a server can refuse a bad seed before it
// creates a data dir.
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Clock } from './clock.js';
import { isCollectionName, isResourceId } from './names.js';
import { newId } from './ids.js';
import { isJsonObject, type JsonObject } from './json.js';
import { parseJson } from './json-text.js';
import type { Problem } from './protocol/problem.js';
import type { Mutation, Store } from './store/types.js';
import type { Writer } from './writes/writer.js';

const META_SPACE = '$meta';
/** A byte order mark an editor may have put first (RFC 8259 §8.1 lets a parser ignore it). */
const BOM = 0xfeff;
const SEED_MARKER = 'seed';

/** Sample data read and checked for shape: the documents to store, each with a label naming its file and item. */
export interface SeedData {
  readonly path: string;
  readonly mutations: readonly Mutation[];
  readonly labels: readonly string[];
  /** What was left out and why (db.json members that are not arrays). */
  readonly notes: readonly string[];
}

export type SeedRead =
  | { readonly ok: true; readonly data: SeedData }
  | { readonly ok: false; readonly message: string };

export type SeedResult =
  | { readonly ok: true; readonly loaded: number; readonly notes?: readonly string[] }
  | { readonly ok: false; readonly message: string };

/** Why `store` would not be seeded, or undefined when it would be. */
export function seedSkipReason(store: Store): string | undefined {
  if (store.get(META_SPACE, SEED_MARKER) !== undefined) {
    return 'the store was seeded before (deleted sample data does not come back)';
  }
  if (store.collections().some(isCollectionName)) return 'the store already holds data';
  return undefined;
}

/** Loads the seed at `source` (a path, or data read before) into `store` when it is still empty. */
export async function loadSeed(
  writer: Writer,
  store: Store,
  source: string | SeedData,
  clock: Clock,
): Promise<SeedResult> {
  if (seedSkipReason(store) !== undefined) return { ok: true, loaded: 0 };
  const read = typeof source === 'string' ? await readSeed(source, clock) : { ok: true as const, data: source };
  if (!read.ok) return read;
  const { path, mutations, labels, notes } = read.data;
  const loaded = (result: number): SeedResult =>
    notes.length === 0 ? { ok: true, loaded: result } : { ok: true, loaded: result, notes };
  if (mutations.length === 0) return loaded(0);
  const marker: Mutation = {
    kind: 'put', collection: META_SPACE, id: SEED_MARKER, doc: { path, loaded: mutations.length },
  };
  const result = await writer.write([...mutations, marker]);
  if (!result.ok && result.reason === 'invalid') {
    return { ok: false, message: `${labels[result.index] ?? `seed ${path}`}: ${problemText(result.problem)}` };
  }
  if (!result.ok) return { ok: false, message: `seed ${path}: the store refused the data (${result.reason})` };
  return loaded(mutations.length);
}

/** The first seed document the write path would refuse (`check` is its document check), as a message. */
export function checkSeed(data: SeedData, check: (mutation: Mutation) => Problem | undefined): string | undefined {
  for (const [index, mutation] of data.mutations.entries()) {
    const refused = check(mutation);
    if (refused !== undefined) return `${data.labels[index] ?? `seed ${data.path}`}: ${problemText(refused)}`;
  }
  return undefined;
}

/** Reads the seed files and checks their shape; touches no store. */
export async function readSeed(path: string, clock: Clock): Promise<SeedRead> {
  const sources = await readSources(path);
  if (!sources.ok) return sources;
  const mutations: Mutation[] = [];
  const labels: string[] = [];
  for (const [collection, items, file] of sources.collections) {
    if (!isCollectionName(collection)) {
      return { ok: false, message: `seed ${file}: '${collection}' is not a valid collection name` };
    }
    if (!Array.isArray(items)) {
      return { ok: false, message: `seed ${file}: "${collection}" must be an array of objects` };
    }
    const seen = new Set<string>();
    for (const [index, item] of items.entries()) {
      if (!isJsonObject(item)) return { ok: false, message: `seed ${file}: ${collection}[${index}] is not an object` };
      const doc = withTextId(item, clock);
      const id = doc['id'] as string;
      if (!isResourceId(id)) {
        return { ok: false, message: `seed ${file}: ${collection}[${index}] has an invalid id '${id}'` };
      }
      if (seen.has(id)) return { ok: false, message: `seed ${file}: ${collection}[${index}] repeats id '${id}'` };
      seen.add(id);
      mutations.push({ kind: 'put', collection, id, doc });
      labels.push(`seed ${file}: ${collection}[${index}]`);
    }
  }
  return { ok: true, data: { path, mutations, labels, notes: sources.notes } };
}

type Sources = { ok: true; collections: [string, unknown, string][]; notes: string[] } | { ok: false; message: string };

async function readSources(path: string): Promise<Sources> {
  let info;
  try {
    info = await stat(path);
  } catch {
    return { ok: false, message: `seed ${path}: no such file or folder` };
  }
  if (info.isDirectory()) {
    const files = (await readdir(path)).filter((name) => name.endsWith('.json')).sort();
    const collections: [string, unknown, string][] = [];
    for (const name of files) {
      const file = join(path, name);
      const parsed = await readJson(file);
      if (!parsed.ok) return parsed;
      collections.push([basename(name, '.json'), parsed.value, file]);
    }
    return { ok: true, collections, notes: [] };
  }
  const parsed = await readJson(path);
  if (!parsed.ok) return parsed;
  if (!isJsonObject(parsed.value)) return { ok: false, message: `seed ${path}: a db.json must be an object of arrays` };
  const collections: [string, unknown, string][] = [];
  const notes: string[] = [];
  for (const [name, items] of Object.entries(parsed.value)) {
    if (Array.isArray(items)) collections.push([name, items, path]);
    else notes.push(`seed ${path}: '${name}' is not an array of items (a json-server singular resource); skipped`);
  }
  return { ok: true, collections, notes };
}

/**
 * A seed file's JSON, read as every write path reads JSON: numbers exactly or not at all
 * (CONVENTIONS.md#json-bodies).
 */
async function readJson(file: string): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, message: `seed ${file}: cannot read it (${reason})` };
  }
  const parsed = parseJson(text.charCodeAt(0) === BOM ? text.slice(1) : text);
  if (parsed.ok) return { ok: true, value: parsed.value };
  const where = parsed.error.pointer === undefined ? '' : ` (${parsed.error.pointer})`;
  return { ok: false, message: `seed ${file}: not valid JSON: ${parsed.error.message}${where}` };
}

function withTextId(item: JsonObject, clock: Clock): JsonObject {
  const id = item['id'];
  if (typeof id === 'string') return item;
  if (typeof id === 'number' && Number.isInteger(id)) return { ...item, id: String(id) };
  if (id === undefined) return { id: newId(clock.now()), ...item };
  return { ...item, id: JSON.stringify(id) };
}

/** A refused document in one line: the problem's detail and where it points. */
function problemText(refused: Problem): string {
  const where = (refused.errors ?? []).map((item) =>
    item.pointer === undefined ? item.detail : `${item.pointer === '' ? '/' : item.pointer} ${item.detail}`);
  return where.length === 0 ? refused.detail : `${refused.detail} (${where.join('; ')})`;
}
