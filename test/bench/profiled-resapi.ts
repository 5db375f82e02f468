// `resapi serve` with a CPU profile of the loads the suite measures and nothing else (README,
// Performance, `--profile DIR`): `node profiled-resapi.js PREFIX BIN serve ...` runs BIN in this
// process, and each SIGUSR2 starts the profiler or stops it and writes what it took to
// `PREFIX-<n>.cpuprofile` (the suite sends one right before each measured load and one right after).
// A profile of the whole process (`node --cpu-prof`) also held the seeding's recovery, the settling
// load, the warm-ups and the work left after each load (a webhook load's outcomes, a subscription's
// deliveries): under webhook accepts the receiver's code was 26% of that profile's busy time and
// 40% of the measured loads' alone. The profiler starts when this process takes the signal, a turn
// after it is sent, so the first milliseconds of each load are not in it.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { pathToFileURL } from 'node:url';

const [prefix, bin, ...args] = process.argv.slice(2);
if (prefix === undefined || bin === undefined) throw new Error('usage: profiled-resapi.js PREFIX BIN serve ...');

const session = new Session();
session.connect();
session.post('Profiler.enable');
let profiling = false;
let windows = 0;
process.on('SIGUSR2', () => {
  if (!profiling) {
    profiling = true;
    session.post('Profiler.start');
    return;
  }
  profiling = false;
  // A session of this thread answers at once: the profile is written before the next turn.
  session.post('Profiler.stop', (error, result) => {
    if (error) throw error;
    writeFileSync(`${prefix}-${++windows}.cpuprofile`, JSON.stringify(result.profile));
  });
});
process.argv = [process.execPath, bin, ...args];
await import(pathToFileURL(bin).href);
