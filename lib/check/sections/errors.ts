// Placeholder until the section's checks are written.
import type { Check } from '../types.js';

export const ERROR_CHECKS: readonly Check[] = [];
