// Retry-After (RFC 9110 §10.2.3): `HTTP-date / delay-seconds`, as a wait in milliseconds from now.
// Read by the webhook sender (CONVENTIONS.md#delivery-retries honours it) and by the client's retries
// (CONVENTIONS.md#client-library). A value that is neither is ignored, as if absent.
import { parseHttpDate } from './http-date.js';
import { trimOws } from './field-syntax.js';

export function retryAfterMs(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = trimOws(value);
  if (/^\d{1,10}$/.test(text)) return Number(text) * 1000;
  const date = parseHttpDate(text, now);
  return date === undefined ? undefined : Math.max(0, date - now);
}
