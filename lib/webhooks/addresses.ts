// IP addresses as the network sees them, not as a URL spells them: what the self-delivery check
// (subscriptions.ts `pointsAtSelf`, CONVENTIONS.md#subscriptions) and `outbox.refusePrivateAddresses`
// (post.ts, CONVENTIONS.md#deliveries) compare. One address has many spellings: `127.1`,
// `::ffff:127.0.0.1`, `::ffff:7f00:1` and `0:0:0:0:0:ffff:7f00:1` all reach 127.0.0.1, so an address
// is read into its bytes first, an IPv4-mapped IPv6 address (RFC 4291 §2.5.5.2) as the IPv4 address
// it carries, and every decision is made on those bytes.
import { isIP } from 'node:net';

/** An address read: 4 bytes (IPv4, and IPv4-mapped IPv6) or 16 (IPv6). */
export type AddressBytes = readonly number[];

const IPV4_BYTES = 4;
const IPV6_GROUPS = 8;
const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const IPV6_UNSPECIFIED: AddressBytes = Array.from({ length: 16 }, () => 0);
const IPV6_LOOPBACK: AddressBytes = [...IPV6_UNSPECIFIED.slice(0, 15), 1];

/**
 * The ranges a delivery may not reach under `outbox.refusePrivateAddresses`, as [bytes, prefix bits].
 * IPv4: "this network" and unspecified (RFC 1122 §3.2.1.3: 0.0.0.0 reaches this host), loopback (RFC
 * 1122), private (RFC 1918), shared address space (RFC 6598: carrier-grade NAT, often a provider's
 * internal network), link-local (RFC 3927, where cloud metadata services answer), IETF protocol
 * assignments (RFC 6890), benchmarking (RFC 2544), multicast (RFC 5771) and reserved and broadcast
 * (RFC 1112 §4, RFC 919). IPv6: unspecified and loopback (RFC 4291 §2.5.2, §2.5.3), link-local
 * (§2.5.6), unique-local (RFC 4193), multicast (§2.7), the local-use NAT64 prefix (RFC 8215).
 */
const PRIVATE_RANGES: readonly (readonly [AddressBytes, number])[] = [
  [[0, 0, 0, 0], 8],
  [[127, 0, 0, 0], 8],
  [[10, 0, 0, 0], 8],
  [[172, 16, 0, 0], 12],
  [[192, 168, 0, 0], 16],
  [[100, 64, 0, 0], 10],
  [[169, 254, 0, 0], 16],
  [[192, 0, 0, 0], 24],
  [[198, 18, 0, 0], 15],
  [[224, 0, 0, 0], 4],
  [[240, 0, 0, 0], 4],
  [IPV6_UNSPECIFIED, 128],
  [IPV6_LOOPBACK, 128],
  [[0xfe, 0x80, ...IPV6_UNSPECIFIED.slice(2)], 10],
  [[0xfc, ...IPV6_UNSPECIFIED.slice(1)], 7],
  [[0xff, ...IPV6_UNSPECIFIED.slice(1)], 8],
  [[0, 0x64, 0xff, 0x9b, 0, 1, ...IPV6_UNSPECIFIED.slice(6)], 48],
];

/**
 * IPv6 prefixes whose addresses carry an IPv4 address that the network reaches through them, as
 * [prefix, prefix bits, offset of the IPv4 bytes]: the well-known NAT64 prefix 64:ff9b::/96 (RFC
 * 6052 §2.1, the IPv4 address in the last 4 bytes) and 6to4 2002::/16 (RFC 3056 §2, in bytes 2-5).
 * Such an address is refused when the IPv4 address it carries is.
 */
const IPV4_CARRIERS: readonly (readonly [AddressBytes, number, number])[] = [
  [[0, 0x64, 0xff, 0x9b, ...IPV6_UNSPECIFIED.slice(4)], 96, 12],
  [[0x20, 0x02, ...IPV6_UNSPECIFIED.slice(2)], 16, 2],
];

/** The bytes of an IPv4 or IPv6 address (a zone, `%eth0`, is left out), or undefined for anything else. */
export function addressBytes(text: string): AddressBytes | undefined {
  const zone = text.indexOf('%');
  const address = zone === -1 ? text : text.slice(0, zone);
  switch (isIP(address)) {
    case 4:
      return address.split('.').map(Number);
    case 6: {
      const bytes = ipv6Bytes(address);
      const mapped = MAPPED_PREFIX.every((byte, index) => bytes[index] === byte);
      return mapped ? bytes.slice(MAPPED_PREFIX.length) : bytes;
    }
    default:
      return undefined;
  }
}

/** One spelling per address (dotted IPv4, or eight hex groups), for comparing; undefined if not an address. */
export function canonicalAddress(text: string): string | undefined {
  const bytes = addressBytes(text);
  if (bytes === undefined) return undefined;
  if (bytes.length === IPV4_BYTES) return bytes.join('.');
  const groups: string[] = [];
  for (let index = 0; index < bytes.length; index += 2) {
    groups.push((((bytes[index] as number) << 8) | (bytes[index + 1] as number)).toString(16));
  }
  return groups.join(':');
}

/** Is it an address a delivery may not reach under `outbox.refusePrivateAddresses`? Anything unreadable is. */
export function isPrivateAddress(text: string): boolean {
  const bytes = addressBytes(text);
  if (bytes === undefined) return true;
  const refused = (address: AddressBytes): boolean =>
    PRIVATE_RANGES.some(([range, bits]) => inRange(address, range, bits));
  if (refused(bytes)) return true;
  const carrier = IPV4_CARRIERS.find(([prefix, bits]) => inRange(bytes, prefix, bits));
  return carrier !== undefined && refused(bytes.slice(carrier[2], carrier[2] + IPV4_BYTES));
}

/** 0.0.0.0 or `::`: as a destination, both reach this host (RFC 1122 §3.2.1.3; Linux, BSD and macOS alike). */
export function isUnspecifiedAddress(text: string): boolean {
  const bytes = addressBytes(text);
  return bytes !== undefined && bytes.every((byte) => byte === 0);
}

/** 127.0.0.0/8 or ::1. */
export function isLoopbackAddress(text: string): boolean {
  const bytes = addressBytes(text);
  if (bytes === undefined) return false;
  return bytes.length === IPV4_BYTES ? bytes[0] === 127 : inRange(bytes, IPV6_LOOPBACK, 128);
}

function inRange(bytes: AddressBytes, range: AddressBytes, bits: number): boolean {
  if (bytes.length !== range.length) return false;
  for (let bit = 0; bit < bits; bit += 8) {
    const left = Math.min(8, bits - bit);
    const mask = (0xff << (8 - left)) & 0xff;
    const index = bit / 8;
    if (((bytes[index] as number) & mask) !== ((range[index] as number) & mask)) return false;
  }
  return true;
}

/** The 16 bytes of an address `isIP` said is IPv6 (RFC 4291 §2.2: `::`, and a dotted IPv4 tail). */
function ipv6Bytes(address: string): number[] {
  let text = address;
  const tail: number[] = [];
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted !== null) {
    tail.push(...(dotted[1] as string).split('.').map(Number));
    text = text.slice(0, -(dotted[1] as string).length);
    // `::ffff:1.2.3.4` leaves `::ffff:`, whose last colon only separated the tail.
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const [head = '', rest] = text.split('::');
  const groups = (part: string): number[] => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const missing = IPV6_GROUPS - tail.length / 2 - left.length - right.length;
  const all = [...left, ...Array.from({ length: missing }, () => 0), ...right];
  return [...all.flatMap((group) => [group >> 8, group & 0xff]), ...tail];
}
