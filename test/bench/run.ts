// `npm run bench [-- section ...]`: the benchmarks (never part of `npm test`). Sections: writes,
// recovery, filter, webhooks, sender. Figures are printed as they come, then once more as Markdown tables
// for the README.
import { benchFilter } from './filter.js';
import { Report } from './measure.js';
import { benchRecovery } from './recovery.js';
import { benchSender } from './sender.js';
import { benchWebhooks } from './webhooks.js';
import { benchWrites } from './writes.js';

const sections = new Set(process.argv.slice(2));
const wanted = (name: string): boolean => sections.size === 0 || sections.has(name);
const report = new Report();
if (wanted('writes')) await benchWrites(report, [1, 8, 64]);
if (wanted('recovery')) await benchRecovery(report, [100_000, 1_000_000]);
if (wanted('filter')) await benchFilter(report, [100_000, 1_000_000]);
if (wanted('webhooks')) await benchWebhooks(report);
if (wanted('sender')) await benchSender(report);
process.stdout.write(`\n${report.markdown()}\n`);
