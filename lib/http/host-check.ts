// The Host check (CONVENTIONS.md#host-check): while resapi listens on a loopback address, it answers
// only requests whose Host names it, so DNS rebinding cannot reach it. A page on `evil.example` can
// make that name resolve to 127.0.0.1; the browser then treats resapi as the page's own origin, past
// every CORS rule, but still sends `Host: evil.example` (RFC 9110 §7.2), which no name of this server
// matches: 421 Misdirected Request (RFC 9110 §15.5.20).
// - The names: a loopback name (localhost and names under it, which always mean the loopback address,
//   RFC 6761 §6.3; 127.0.0.1; [::1]), the address listened on, the host of --base-url, and
//   `allowedHosts` (a tunnel, a container name), compared case-insensitively, any port.
// - Listening on any other address (0.0.0.0, a LAN address) the server was exposed on purpose and is
//   reached by names nobody here can list, so there is no check: API keys and `cors.origins` guard it.
// - The webhook receiver is exempt: its signature authenticates it, and providers reach a laptop
//   through tunnels whose Host is the tunnel's (lib/app.ts asks this only of other routes).
import { isIP } from 'node:net';

export class HostCheck {
  private readonly names: ReadonlySet<string>;

  /**
   * The check for a server listening on `address` (an IP address as bound, IPv6 without brackets),
   * or undefined when it does not listen on loopback and so checks nothing.
   */
  static forServer(address: string, baseUrl: string, allowedHosts: readonly string[]): HostCheck | undefined {
    if (!isLoopbackAddress(address)) return undefined;
    const names = [isIP(address) === 6 ? `[${address}]` : address, ...allowedHosts];
    if (baseUrl !== '') names.push(new URL(baseUrl).hostname);
    return new HostCheck(names);
  }

  private constructor(names: readonly string[]) {
    this.names = new Set(names.map(normalise));
  }

  /** Does the Host field value `host` (uri-host [ ":" port ], already checked for syntax) name this server? */
  admits(host: string): boolean {
    const name = normalise(hostOf(host));
    return name === 'localhost' || name.endsWith('.localhost') || name === '127.0.0.1' || name === '[::1]' ||
      this.names.has(name);
  }
}

/** Is `address` (as bound, IPv6 without brackets) a loopback address: 127.0.0.0/8 or ::1, IPv4-mapped too? */
export function isLoopbackAddress(address: string): boolean {
  const lower = address.toLowerCase();
  const v4 = lower.startsWith('::ffff:') ? lower.slice(7) : lower;
  if (isIP(v4) === 4) return v4.startsWith('127.');
  // Node reports a bound IPv6 address in its shortest form (RFC 5952), so ::1 has one spelling.
  return lower === '::1';
}

/** The host of a Host field value: up to the port, an IP-literal with its brackets (RFC 3986 §3.2.2). */
function hostOf(field: string): string {
  if (field.startsWith('[')) return field.slice(0, field.indexOf(']') + 1);
  const colon = field.indexOf(':');
  return colon === -1 ? field : field.slice(0, colon);
}

/** Names compare case-insensitively (RFC 3986 §3.2.2), and a fully qualified `name.` is `name`. */
function normalise(name: string): string {
  const lower = name.toLowerCase();
  return lower.endsWith('.') ? lower.slice(0, -1) : lower;
}
