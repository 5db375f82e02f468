// `--seed PATH` (CONTRACT §1): a folder of JSON files, one array per collection named after the file
// (products.json → /products), or a json-server style db.json ({ "products": [...], ... }), loaded
// into a store that is still empty, in one atomic batch. "Still empty" means never seeded and never
// written: the seed leaves a marker record in the `$meta` space, so sample data that a user deleted
// does not come back on the next `npm start`.
//
// json-server data often has numeric ids; a path id is text, so `1` is stored as "1". An item with
// no id gets a generated one. Everything goes through the write path, so anything that a PUT of the
// same document would be refused for refuses the start, naming the file and item, rather than loading
// part of it.
import { readFile, readdir, stat } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Clock } from './clock.js';
import { isCollectionName, isResourceId } from './names.js';
import { newId } from './ids.js';
import { isJsonObject, type JsonObject } from './json.js';
import type { Mutation, Store } from './store/types.js';
import type { Writer } from './writes/writer.js';
import type { Problem } from './protocol/problem.js';

export const META_SPACE = '$meta';
const SEED_MARKER = 'seed';

export type SeedResult = { readonly ok: true; readonly loaded: number } | { readonly ok: false; readonly message: string };

export async function loadSeed(writer: Writer, store: Store, path: string, clock: Clock): Promise<SeedResult> {
  if (store.get(META_SPACE, SEED_MARKER) !== undefined || store.collections().some(isCollectionName)) return { ok: true, loaded: 0 };
  const sources = await readSources(path);
  if (!sources.ok) return sources;
  const mutations: Mutation[] = [];
  const labels: string[] = [];
  for (const [collection, items, file] of sources.collections) {
    if (!isCollectionName(collection)) return { ok: false, message: `seed ${file}: '${collection}' is not a valid collection name` };
    if (!Array.isArray(items)) return { ok: false, message: `seed ${file}: "${collection}" must be an array of objects` };
    const seen = new Set<string>();
    for (const [index, item] of items.entries()) {
      if (!isJsonObject(item)) return { ok: false, message: `seed ${file}: ${collection}[${index}] is not an object` };
      const doc = withTextId(item, clock);
      const id = doc['id'] as string;
      if (!isResourceId(id)) return { ok: false, message: `seed ${file}: ${collection}[${index}] has an invalid id '${id}'` };
      if (seen.has(id)) return { ok: false, message: `seed ${file}: ${collection}[${index}] repeats id '${id}'` };
      seen.add(id);
      mutations.push({ kind: 'put', collection, id, doc });
      labels.push(`seed ${file}: ${collection}[${index}]`);
    }
  }
  if (mutations.length === 0) return { ok: true, loaded: 0 };
  mutations.push({ kind: 'put', collection: META_SPACE, id: SEED_MARKER, doc: { path, loaded: mutations.length } });
  const result = await writer.write(mutations);
  if (!result.ok && result.reason === 'invalid') return { ok: false, message: `${labels[result.index] ?? `seed ${path}`}: ${problemText(result.problem)}` };
  if (!result.ok) return { ok: false, message: `seed ${path}: the store refused the data (${result.reason})` };
  return { ok: true, loaded: mutations.length - 1 };
}

type Sources = { ok: true; collections: [string, unknown, string][] } | { ok: false; message: string };

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
    return { ok: true, collections };
  }
  const parsed = await readJson(path);
  if (!parsed.ok) return parsed;
  if (!isJsonObject(parsed.value)) return { ok: false, message: `seed ${path}: a db.json must be an object of arrays` };
  return { ok: true, collections: Object.entries(parsed.value).map(([name, items]) => [name, items, path]) };
}

async function readJson(file: string): Promise<{ ok: true; value: unknown } | { ok: false; message: string }> {
  try {
    return { ok: true, value: JSON.parse(await readFile(file, 'utf8')) };
  } catch (error) {
    return { ok: false, message: `seed ${file}: ${error instanceof Error ? error.message : String(error)}` };
  }
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
  const where = (refused.errors ?? []).map((item) => (item.pointer === undefined ? item.detail : `${item.pointer === '' ? '/' : item.pointer} ${item.detail}`));
  return where.length === 0 ? refused.detail : `${refused.detail} (${where.join('; ')})`;
}
