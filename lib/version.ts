// The package's version (package.json), for `resapi --version` and the OpenAPI description's info.version.
import { readFile } from 'node:fs/promises';

export async function packageVersion(): Promise<string> {
  // build/lib/version.js → the package root.
  const manifest: unknown = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8'));
  if (typeof manifest !== 'object' || manifest === null || !('version' in manifest)) return 'unknown';
  return String(manifest.version);
}
