// Fresh folders under the system temp dir, removed afterwards whatever happens: one for a single
// test (`withTempDir`), or as many as a suite asks for, all removed in after() (`tempDirsForSuite`).
import { mkdtempSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';

/** Runs `run` with a new empty folder named `resapi-<name>-…`, then removes it. */
export async function withTempDir(name: string, run: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), `resapi-${name}-`));
  try {
    await run(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * For a suite: call it where a describe's body (or a file's top level) runs. Each call of the
 * function it returns makes a new empty folder named `resapi-<name>-…` (in a test or a hook alike),
 * and the suite's after() removes every one of them. after() hooks run in the order they are
 * registered: for a folder a server of the suite still uses, call this after serverForSuite() (or
 * after the hook that stops the server), so the folder goes once the server is closed.
 */
export function tempDirsForSuite(name: string): () => string {
  const made: string[] = [];
  after(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    const dir = mkdtempSync(join(tmpdir(), `resapi-${name}-`));
    made.push(dir);
    return dir;
  };
}
