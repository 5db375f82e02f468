// Every check of `resapi check`, by section (lib/check/sections/): the one list the runner reads.
import { CACHING_CHECKS } from './sections/caching.js';
import { CONDITIONAL_CHECKS } from './sections/conditional.js';
import { ERROR_CHECKS } from './sections/errors.js';
import { IDEMPOTENCE_CHECKS } from './sections/idempotence.js';
import { PAGING_CHECKS } from './sections/paging.js';
import { RESOURCE_CHECKS } from './sections/resources.js';
import { WEBHOOK_CHECKS } from './sections/webhooks.js';
import type { Check } from './types.js';

export const CHECKS: readonly Check[] = [...RESOURCE_CHECKS, ...CONDITIONAL_CHECKS, ...CACHING_CHECKS, ...IDEMPOTENCE_CHECKS, ...PAGING_CHECKS, ...ERROR_CHECKS, ...WEBHOOK_CHECKS];

