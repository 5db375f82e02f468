// `--handlers FILE.mjs` (CONVENTIONS.md#webhook-handlers): an ES module whose default export maps event kinds, or "*",
// to functions `async (event, ctx) => {}`. A file that is missing, does not load, or exports another
// shape refuses the start (exit 1), naming what is wrong, rather than leaving events unprocessed.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { WebhookHandler } from '../webhooks/inbox.js';

export type LoadedHandlers =
  | { readonly ok: true; readonly handlers: Readonly<Record<string, WebhookHandler>> }
  | { readonly ok: false; readonly message: string };

export async function loadHandlers(path: string): Promise<LoadedHandlers> {
  let module: unknown;
  try {
    module = await import(pathToFileURL(resolve(path)).href);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND'
      ? 'no such file'
      : error instanceof Error ? error.message : String(error);
    return { ok: false, message: `--handlers ${path}: cannot load it (${reason})` };
  }
  const exported = (module as { default?: unknown }).default;
  if (typeof exported !== 'object' || exported === null || Array.isArray(exported)) {
    const message = `--handlers ${path}: ` +
      'the default export must be an object of event kinds (or "*") to async functions';
    return { ok: false, message };
  }
  const handlers: Record<string, WebhookHandler> = {};
  for (const [kind, handler] of Object.entries(exported)) {
    if (typeof handler !== 'function') {
      return { ok: false, message: `--handlers ${path}: the handler for ${JSON.stringify(kind)} is not a function` };
    }
    handlers[kind] = handler as WebhookHandler;
  }
  if (Object.keys(handlers).length === 0) {
    return { ok: false, message: `--handlers ${path}: the default export names no event kind` };
  }
  return { ok: true, handlers };
}
