// Placeholder until the section's checks are written.
import type { Check } from '../types.js';

export const PAGING_CHECKS: readonly Check[] = [];
