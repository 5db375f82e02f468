// The signing secrets of a subscription (CONVENTIONS.md#signing-secrets-and-rotation). Each lives in
// its record of `$subscription-secrets`, apart from the public document, which no response but
// `GET /$subscriptions/{id}/$secret` ever serializes, and that one shows the current secret alone:
//
//   { "secret": "<current>", "previous"?: "<the one it replaced>", "previousUntil"?: <ms since the epoch> }
//
// - A create without a secret gets one: `whsec_` and the base64 of 24 bytes of the server's random
//   source, the form Standard Webhooks libraries take as is (lib/protocol/standard-signature.ts).
// - A replace that sends a different secret keeps the one it replaces as `previous` until
//   `secretOverlapS` seconds after the replace (0: not at all); until then `webhook-signature` carries
//   both, so a receiver can switch at any moment within the window. A second rotation within the
//   window keeps only the secret it replaces: the one before is dropped.
// - A replace that sends the secret it already has, or none, keeps the record as it is, window
//   included, except that a previous secret whose window is over is dropped then.
// - The sender compares the window with the clock at each attempt, so an expired previous secret
//   never signs, whether or not a write has dropped it yet.
import { createSecretKey, type KeyObject } from 'node:crypto';
import type { Random } from '../clock.js';
import { isJsonObject, type JsonObject } from '../json.js';
import { signingKey, WHSEC_PREFIX } from '../protocol/standard-signature.js';
import type { Mutation, StoredRecord } from '../store/types.js';
import { SECRET_SPACE } from './subscriptions.js';

/** Bytes of a generated secret's key: 192 bits, as many as Svix hands out. */
const GENERATED_KEY_BYTES = 24;
/** Secrets whose keys a SigningKeys keeps, at most (then it starts again). */
const KEPT_SECRETS = 1024;

/** The two HMAC keys one secret signs a delivery with. */
export interface SecretKeys {
  /** X-Signature's: the secret's UTF-8 bytes (CONVENTIONS.md#deliveries). */
  readonly plain: KeyObject;
  /** Standard Webhooks': a `whsec_` secret's decoded bytes, else its UTF-8 bytes (standard-signature.ts). */
  readonly standard: KeyObject;
}

/**
 * The keys of the secrets that sign deliveries, each made once: an HMAC made from a KeyObject skips
 * turning a text (and, for a `whsec_` secret, its base64) into key bytes again at every attempt: about
 * an eighth of what a delivery's two signatures cost (0.3-0.7 of 4.5-5.3 us, measured). A secret that is
 * replaced is simply no longer asked for; the few kept past their use go when the map is full.
 */
export class SigningKeys {
  private readonly keys = new Map<string, SecretKeys>();

  of(secret: string): SecretKeys {
    let keys = this.keys.get(secret);
    if (keys === undefined) {
      if (this.keys.size >= KEPT_SECRETS) this.keys.clear();
      keys = { plain: createSecretKey(Buffer.from(secret, 'utf8')), standard: createSecretKey(signingKey(secret)) };
      this.keys.set(secret, keys);
    }
    return keys;
  }
}

/** A new secret for a subscription created without one: `whsec_` + base64 of random bytes. */
export function generatedSecret(random: Random): string {
  return WHSEC_PREFIX + random.bytes(GENERATED_KEY_BYTES).toString('base64');
}

/**
 * The secrets a delivery made at `now` is signed with: the current one, then the previous one while
 * its window lasts. Empty for a record without a secret.
 */
export function signingSecrets(doc: JsonObject | undefined, now: number): string[] {
  if (!isJsonObject(doc) || typeof doc['secret'] !== 'string') return [];
  const { secret, previous, previousUntil } = doc;
  const overlapping = typeof previous === 'string' && typeof previousUntil === 'number' && now < previousUntil;
  return overlapping ? [secret, previous] : [secret];
}

/** What a PUT of a subscription sends and decides about its secret. */
export interface SecretChange {
  readonly id: string;
  /** The subscription is being created (any secret record left over is not its own). */
  readonly creating: boolean;
  /** The `secret` member of the body, when it has one. */
  readonly given: string | undefined;
  /** The subscription's `secretOverlapS` as this PUT stores it. */
  readonly overlapS: number;
  readonly now: number;
  /** Makes a secret, for a create without one. */
  readonly generate: () => string;
}

/**
 * The writes a PUT makes to the secret record, stored now as `current`: none when it stays as it is.
 * Each expects the version it read, so two replaces cannot both take the current secret as previous.
 */
export function secretWrites(current: StoredRecord | undefined, change: SecretChange): Mutation[] {
  const { id, given, now } = change;
  if (change.creating || current === undefined || typeof current.doc['secret'] !== 'string') {
    return [{ kind: 'put', collection: SECRET_SPACE, id, doc: { secret: given ?? change.generate() } }];
  }
  const expect = { version: current.version };
  const secret = current.doc['secret'];
  if (given !== undefined && given !== secret) {
    const doc: JsonObject = change.overlapS > 0
      ? { secret: given, previous: secret, previousUntil: now + change.overlapS * 1000 }
      : { secret: given };
    return [{ kind: 'put', collection: SECRET_SPACE, id, doc, expect }];
  }
  // Kept: the same secret, or none sent. A window that is over is tidied away with this write.
  const until = current.doc['previousUntil'];
  const expired = Object.hasOwn(current.doc, 'previous') && !(typeof until === 'number' && now < until);
  return expired ? [{ kind: 'put', collection: SECRET_SPACE, id, doc: { secret }, expect }] : [];
}
