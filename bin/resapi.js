#!/usr/bin/env node
// The resapi executable: a thin shim over the compiled CLI (`npm run build` compiles it).
import { main } from '../build/lib/cli/main.js';

process.exitCode = await main(process.argv.slice(2));
