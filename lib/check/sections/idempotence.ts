// Placeholder until the section's checks are written.
import type { Check } from '../types.js';

export const IDEMPOTENCE_CHECKS: readonly Check[] = [];
