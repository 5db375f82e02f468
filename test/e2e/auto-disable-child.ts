// Child process for auto-disable.test.ts (not a test file): `auto-disable-child.js <dataDir> <offsetMs>`
// starts resapi on 127.0.0.1 port 0 over <dataDir>, its clock <offsetMs> ahead of the system's (so a
// restart can find a streak older than the span without waiting for it), deliveries retried every
// 20 ms and disabled after 60 s of failures (the least `outbox.disableAfterS` allows). Prints
// `listening on <url>` and serves until killed.
import { systemClock, type Clock } from '../../lib/clock.js';
import { start } from '../../lib/index.js';

const [dataDir, offsetText] = process.argv.slice(2);

async function main(): Promise<void> {
  // `node --test build/test` runs every .js under a test/ directory, this one included: without
  // arguments there is nothing to do.
  if (dataDir === undefined) return;
  const offset = Number(offsetText ?? 0);
  const clock: Clock = {
    now: () => systemClock.now() + offset,
    monotonic: () => systemClock.monotonic(),
    setTimer: (ms, callback, options) => systemClock.setTimer(ms, callback, options),
  };
  const server = await start({
    port: 0,
    dataDir,
    clock,
    outbox: { retry: { baseMs: 20, factor: 1, capMs: 20, attempts: 1000 }, disableAfterS: 60 },
  });
  process.stdout.write(`listening on ${server.url}\n`);
}

await main();
