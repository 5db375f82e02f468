// `npm run bench [-- section ...]`: the benchmarks (never part of `npm test`). Sections: filter.
// Figures are printed as they come, then once more as Markdown tables for the README.
import { benchFilter } from './filter.js';
import { Report } from './measure.js';

const sections = new Set(process.argv.slice(2));
const all = sections.size === 0;
const report = new Report();
if (all || sections.has('filter')) await benchFilter(report, [100_000, 1_000_000]);
process.stdout.write(`\n${report.markdown()}\n`);
