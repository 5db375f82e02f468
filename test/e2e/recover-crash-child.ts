// Child process for recover-crash.test.ts (not a test file):
//
//   node recover-crash-child.js <dataDir> <killAfter>
//
// Starts resapi on <dataDir> (127.0.0.1, port 0, no webhook handlers: an event queued again waits,
// parked, and nothing else changes it), prints `listening <url>`, and kills itself with SIGKILL
// (kill -9) as soon as the <killAfter>th write that queues inbox events again is committed: in the
// middle of a `POST /$inbox/$recover` that the parent sends, between two of its batches.
import { start } from '../../lib/index.js';
import { silentLogger } from '../../lib/log.js';
import { INBOX_SPACE } from '../../lib/webhooks/inbox.js';

const [dataDir, killAfterText] = process.argv.slice(2);

async function main(): Promise<void> {
  // `node --test build/test` runs every .js under a test/ directory, this one included: without
  // arguments there is nothing to do.
  if (dataDir === undefined) return;
  const killAfter = Number(killAfterText);
  if (!Number.isSafeInteger(killAfter) || killAfter < 1) {
    process.stderr.write('usage: recover-crash-child.js <dataDir> <killAfter ≥ 1>\n');
    process.exit(2);
  }
  const server = await start({ dataDir, host: '127.0.0.1', port: 0, log: silentLogger });
  let batches = 0;
  server.store.watch((commit) => {
    const requeues = commit.applied.some(({ mutation }) =>
      mutation.kind === 'patch' && mutation.collection === INBOX_SPACE && mutation.set['status'] === 'accepted');
    if (requeues && ++batches === killAfter) process.kill(process.pid, 'SIGKILL');
  });
  process.stdout.write(`listening ${server.url}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
