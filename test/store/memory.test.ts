// MemoryStore (lib/store/memory.ts) against the shared Store conformance suite.
import { MemoryStore } from '../../lib/store/memory.js';
import { storeConformance } from './conformance.js';

storeConformance('MemoryStore', async (options) => {
  const store = new MemoryStore(options);
  return { store, cleanup: () => store.close() };
});
