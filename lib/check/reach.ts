// Reachability first (CONVENTIONS.md#conformance-checker): before any check, one GET of the base URL.
// Any HTTP answer, whatever its status, means the server is there to be graded; no answer at all (a
// refused connection, a name DNS does not know, a TLS failure, bytes that are not HTTP, a timeout)
// ends the run at once, before anything is stored, with one line that says which of these it was.
// The same question is asked again when a check's request got no answer, to tell a server that
// stopped answering (the rest of the run is blocked) from one that dropped one request (that check fails).
import { ProbeRefused, type Probe } from './probe.js';

/** The run could not reach the server: `reason` says how, in a few words. */
export class CheckUnreachable extends Error {
  constructor(
    readonly baseUrl: string,
    readonly reason: string,
  ) {
    super(`cannot reach ${baseUrl}: ${reason}`);
  }
}

/** Error codes of a TLS handshake or certificate that failed (Node's, and OpenSSL's through it). */
const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|EPROTO$|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|HOSTNAME_MISMATCH$)/;

/** Throws CheckUnreachable unless the base URL answers in HTTP (any status). */
export async function reach(probe: Probe, baseUrl: string): Promise<void> {
  const reason = await unreachable(probe);
  if (reason !== undefined) throw new CheckUnreachable(baseUrl, reason);
}

/** Why the base URL gives no HTTP answer, or undefined when it gives one. */
export async function unreachable(probe: Probe): Promise<string | undefined> {
  try {
    await probe.send({ method: 'GET', path: '' });
    return undefined;
  } catch (error) {
    if (error instanceof ProbeRefused) return undefined;
    return transportFailure(error);
  }
}

/** A request's failure to get any answer, in a few words, with the system's code where there is one. */
export function transportFailure(error: unknown): string {
  const fields = typeof error === 'object' && error !== null ? (error as { code?: unknown; reason?: unknown }) : {};
  const named = typeof fields.code === 'string' ? fields.code : '';
  const full = error instanceof Error ? error.message : String(error);
  // OpenSSL's messages name its source files (`error:0A00010B:SSL routines:ssl3_get_record:wrong
  // version number:../deps/...`); its reason, the fifth field, says it in a few words.
  const openssl = /error:[0-9A-F]+:[^:]*:[^:]*:([^:\n]+)/.exec(full)?.[1];
  const reason = typeof fields.reason === 'string' ? fields.reason : openssl;
  const message = reason ?? (full.split('\n')[0] ?? '').trim();
  if (named === 'ECONNREFUSED') return 'connection refused (ECONNREFUSED)';
  if (named === 'ENOTFOUND' || named === 'EAI_AGAIN' || named === 'EAI_NONAME') {
    return `the host name does not resolve (${named})`;
  }
  if (TLS_CODES.test(named)) return `TLS failed: ${message} (${named})`;
  // Node's HTTP parser names its errors HPE_*: the bytes that came back are not an HTTP response.
  if (named.startsWith('HPE_')) return `the answer is not HTTP: ${message} (${named})`;
  if (named === 'ECONNRESET') return 'the connection was closed without an answer (ECONNRESET)';
  return named === '' ? message : `${message} (${named})`;
}
