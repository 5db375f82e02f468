// Placeholder until the section's checks are written.
import type { Check } from '../types.js';

export const CONDITIONAL_CHECKS: readonly Check[] = [];
