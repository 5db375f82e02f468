// What a receiving scheme (lib/webhooks/schemes/*.ts) is asked to judge, built the way the receiver
// builds it: header lines by lower-case name, the exact body bytes, the source's secrets, the window
// and "now" in whole seconds. And the two halves of a verdict, read without casts.
import type { Problem } from '../../lib/protocol/problem.js';
import type { Received, ReceivedEvent, Verdict } from '../../lib/webhooks/schemes/common.js';

export interface Delivery {
  /** Header fields as a provider sends them; an array sends one line per element. */
  readonly headers: Readonly<Record<string, string | readonly string[]>>;
  readonly body: string | Buffer;
  readonly secrets: readonly string[];
  readonly nowS: number;
  readonly toleranceS?: number;
  readonly requireTimestamp?: boolean;
}

export function received(delivery: Delivery): Received {
  const headers = new Map<string, string[]>();
  for (const [name, value] of Object.entries(delivery.headers)) {
    const lines = typeof value === 'string' ? [value] : [...value];
    headers.set(name.toLowerCase(), [...(headers.get(name.toLowerCase()) ?? []), ...lines]);
  }
  return {
    headers,
    body: typeof delivery.body === 'string' ? Buffer.from(delivery.body, 'utf8') : delivery.body,
    secrets: delivery.secrets,
    toleranceS: delivery.toleranceS ?? 300,
    requireTimestamp: delivery.requireTimestamp ?? false,
    nowS: delivery.nowS,
  };
}

/** The event of an accepted verdict; fails the test, saying why, on a refusal. */
export function accepted(verdict: Verdict): ReceivedEvent {
  if (!verdict.ok) throw new Error(`refused (${verdict.refusal.problem.status}): ${verdict.refusal.problem.detail}`);
  return verdict.event;
}

/** The problem and log reason of a refusal; fails the test on an accepted verdict. */
export function refused(verdict: Verdict): Problem & { readonly reason: string } {
  if (verdict.ok) throw new Error(`accepted ${JSON.stringify(verdict.event.id)}, expected a refusal`);
  return { ...verdict.refusal.problem, reason: verdict.refusal.reason };
}
