// Webhook deliveries for end-to-end tests (CONVENTIONS.md#receiving-webhooks): a signed event, one POST of it over a
// keep-alive agent, and every item of /$inbox read page after page.
import { type Agent, request as httpRequest } from 'node:http';
import { webhookSignature } from '../../lib/protocol/signature.js';
import { walkPages } from './pages.js';

export interface Delivery {
  readonly id: string;
  readonly body: string;
  readonly signature: string;
}

export interface Answer {
  readonly status: number;
  readonly text: string;
}

export interface InboxItem {
  readonly id: string;
  readonly status: string;
  readonly attempts: number;
}

/** An event with `id` and the given kind and data, signed with `secret`. */
export function signedDelivery(id: string, event: string, data: unknown, secret: string): Delivery {
  const body = JSON.stringify({ id, event, data });
  return { id, body, signature: webhookSignature(body, secret) };
}

/** One signed delivery over a keep-alive agent. */
export function deliver(agent: Agent, base: string, event: Delivery): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const url = new URL('/webhooks', base);
    const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(event.body), 'X-Signature': event.signature };
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('response aborted')));
    });
    req.on('error', reject);
    req.end(event.body);
  });
}

/** Every item of /$inbox, page after page; `context` goes into every failure message. */
export function inboxItems(base: string, context?: string): Promise<InboxItem[]> {
  return walkPages<InboxItem>(base, '/$inbox', { headers: { Prefer: 'maxpagesize=1000' }, context });
}
