// MemoryStore (lib/store/memory.ts) against the shared Store conformance suite.
import { MemoryStore } from '../../lib/store/memory.js';
import { storeConformance } from './conformance.js';

storeConformance('MemoryStore', async (options, run) => {
  const store = new MemoryStore(options);
  try {
    await run(store);
  } finally {
    await store.close();
  }
});
