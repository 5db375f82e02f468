// The checker's HTTP client (its checks are black-box, CONVENTIONS.md#conformance-checker): raw
// requests over node:http or node:https, so a check controls every header it sends (a `Host` of its
// choosing, no header added behind its back) and sees every field line it gets back. It only ever
// sends to the origin it was given, and at most `maxRequests` requests in a whole run: a link that
// points elsewhere is not followed, and the request past the budget is refused, not sent.
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

export interface ProbeRequest {
  readonly method: string;
  /** A path with its query (`/products?$top=1`), or an absolute URL on the checked origin. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: string | Buffer;
}

export interface ProbeResponse {
  readonly status: number;
  readonly url: string;
  /** Field values by lowercase name, each received line separately. */
  readonly lines: ReadonlyMap<string, readonly string[]>;
  readonly bytes: Buffer;
  readonly text: string;
  /** The field's lines joined as one list (`, `), or undefined when absent. */
  header(name: string): string | undefined;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json(): unknown;
  /**
   * Whether bytes followed a response that can have no content (a 304, a 204, the answer to HEAD,
   * RFC 9110 §6.4.1): the parser ends such a message at its header section and reads what follows
   * as the start of another response. Seen when they come with the header section, as from a server
   * that writes the message at once. The message itself is kept; a check judges the bytes.
   */
  readonly bodyWhereNone: boolean;
}

export class ProbeRefused extends Error {}

/** Bytes of a response body kept; a longer one is cut off (no check needs more). */
const BODY_LIMIT = 8 * 1024 * 1024;

export class Probe {
  readonly origin: string;
  private readonly base: URL;
  private sent = 0;

  constructor(
    baseUrl: string,
    private readonly options: {
      readonly maxRequests: number;
      readonly timeoutMs: number;
      readonly headers: Readonly<Record<string, string>>;
    },
  ) {
    this.base = new URL(baseUrl);
    if (this.base.protocol !== 'http:' && this.base.protocol !== 'https:') {
      throw new ProbeRefused(`the base URL must be http or https, not ${this.base.protocol}`);
    }
    this.origin = this.base.origin;
  }

  /** Requests sent so far. */
  get count(): number {
    return this.sent;
  }

  /** The absolute URL of `path` under the base URL (a path keeps the base's own path as its prefix). */
  resolve(path: string): URL {
    if (/^https?:\/\//i.test(path)) return new URL(path);
    const prefix = this.base.pathname.replace(/\/+$/, '');
    return new URL(`${prefix}${path.startsWith('/') ? '' : '/'}${path}`, this.origin);
  }

  send(request: ProbeRequest): Promise<ProbeResponse> {
    const url = this.resolve(request.path);
    if (url.origin !== this.origin) {
      return Promise.reject(new ProbeRefused(`not sent: ${url.href} is outside ${this.origin}`));
    }
    const { maxRequests, timeoutMs } = this.options;
    if (this.sent >= maxRequests) {
      return Promise.reject(new ProbeRefused(`not sent: the run's budget of ${maxRequests} requests is spent`));
    }
    this.sent++;
    const body =
      request.body === undefined
        ? undefined
        : Buffer.isBuffer(request.body)
          ? request.body
          : Buffer.from(request.body, 'utf8');
    const headers: Record<string, string | string[]> = { ...this.options.headers };
    for (const [name, value] of Object.entries(request.headers ?? {})) {
      headers[name] = typeof value === 'string' ? value : [...value];
    }
    if (body !== undefined) headers['Content-Length'] = String(body.length);
    const transport = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const outgoing = transport(url, { method: request.method, headers, agent: false });
      /** The answer so far, once its header section came: a message with no content is whole then. */
      let bodiless: { status: number; raw: readonly string[] } | undefined;
      outgoing.setTimeout(timeoutMs, () => outgoing.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      outgoing.on('error', (error: Error & { code?: unknown }) => {
        // The parser's error (HPE_*) after a message that has no content: bytes came where none belong.
        const parsing = typeof error.code === 'string' && error.code.startsWith('HPE_');
        if (bodiless !== undefined && parsing) {
          resolve(response(url.href, bodiless.status, bodiless.raw, Buffer.alloc(0), true));
          return;
        }
        reject(error);
      });
      outgoing.on('response', (answer) => {
        const status = answer.statusCode ?? 0;
        const noContent = request.method === 'HEAD' || status === 204 || status === 304;
        if (noContent) bodiless = { status, raw: answer.rawHeaders };
        const chunks: Buffer[] = [];
        let size = 0;
        answer.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size <= BODY_LIMIT) chunks.push(chunk);
        });
        answer.on('error', reject);
        answer.on('end', () => {
          resolve(response(url.href, status, answer.rawHeaders, Buffer.concat(chunks), false));
        });
      });
      outgoing.end(body);
    });
  }
}

function response(
  url: string,
  status: number,
  raw: readonly string[],
  bytes: Buffer,
  bodyWhereNone: boolean,
): ProbeResponse {
  const lines = new Map<string, string[]>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = (raw[i] as string).toLowerCase();
    const list = lines.get(name) ?? [];
    list.push(raw[i + 1] as string);
    lines.set(name, list);
  }
  const text = bytes.toString('utf8');
  return {
    status,
    url,
    lines,
    bytes,
    text,
    bodyWhereNone,
    header: (name) => lines.get(name.toLowerCase())?.join(', '),
    json: () => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        return undefined;
      }
    },
  };
}
