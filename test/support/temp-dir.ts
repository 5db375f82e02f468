// A fresh folder under the system temp dir for one test, removed afterwards whatever happens.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Runs `run` with a new empty folder named `resapi-<name>-…`, then removes it. */
export async function withTempDir(name: string, run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `resapi-${name}-`));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
