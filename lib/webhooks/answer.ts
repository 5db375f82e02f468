// A receiver's answer to one delivery, read from the connection's bytes (post.ts): HTTP/1.1's
// response framing (RFC 9112 §4, §6, §7.1) and no more. A delivery needs the status and Retry-After
// (CONVENTIONS.md#delivery-retries); the rest of the head is skipped and the body counted and
// dropped, so the connection can carry the next delivery once the answer has ended.
//
//   status-line = HTTP-version SP status-code SP [ reason-phrase ]          (RFC 9112 §4)
//   chunked-body = *chunk last-chunk trailer-section CRLF                   (RFC 9112 §7.1)
//   chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF
//
// A 1xx answer is interim and skipped (RFC 9110 §15.2); 204 and 304 have no body (RFC 9112 §6.3);
// a body is delimited by `Transfer-Encoding: chunked`, else by `Content-Length`, else by the close of
// the connection, which then carries nothing more. A head longer than HEAD_LIMIT or anything that is
// not HTTP/1.x framing is an error, named as node's own parser names it (`HPE_…`), and the connection
// is dropped. The bytes are read as latin1, one character per byte, so lengths are byte counts.
const CR_LF = '\r\n';
const HEAD_END = '\r\n\r\n';
/** The longest head read, as node:http allows by default (its `maxHeaderSize`). */
export const HEAD_LIMIT = 16 * 1024;
/** A chunk-size line longer than this is not one (a size, extensions aside, is a few hex digits). */
const CHUNK_LINE_LIMIT = 1024;
const STATUS_LINE = /^HTTP\/1\.([01]) ([1-9]\d\d)(?: |$)/;
const DECIMAL = /^\d{1,15}$/;
const HEX = /^[0-9a-fA-F]{1,12}$/;

/** What a look at the bytes came to: the answer goes on, has ended, or is not an HTTP answer. */
export type AnswerState = 'more' | 'done' | 'error';

type Stage = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailer' | 'close' | 'done' | 'error';

export class AnswerReader {
  /** The final status, once its head is read. */
  status: number | undefined;
  /** Its first Retry-After field, if any. */
  retryAfter: string | undefined;
  /** Body bytes read so far (counted, never kept). */
  bodyBytes = 0;
  /** Why the bytes are not an answer, in node's words. */
  error: string | undefined;
  /** May the connection carry another request once the answer is done (HTTP/1.1, no `close`, framed body)? */
  reusable = false;
  private stage: Stage = 'head';
  /** Bytes read but not yet consumed: a head or a chunk line not complete yet. */
  private pending = '';
  /** Bytes of the body (or of the current chunk) still to come. */
  private remaining = 0;

  /** Reads the next bytes of the connection. */
  push(chunk: Buffer): AnswerState {
    if (this.stage === 'length' && this.pending === '' && chunk.length < this.remaining) {
      // Most of a long body: counted without being read as text.
      this.remaining -= chunk.length;
      this.bodyBytes += chunk.length;
      return 'more';
    }
    this.pending += chunk.toString('latin1');
    return this.consume();
  }

  /** The connection ended: a body read to the close is done; anything else ended too early. */
  end(): AnswerState {
    if (this.stage === 'close') {
      this.stage = 'done';
      return 'done';
    }
    return this.stage === 'done' ? 'done' : 'error';
  }

  private consume(): AnswerState {
    for (;;) {
      switch (this.stage) {
        case 'head': {
          const at = this.pending.indexOf(HEAD_END);
          if (at < 0) return this.pending.length > HEAD_LIMIT ? this.fail('HPE_HEADER_OVERFLOW') : 'more';
          if (at > HEAD_LIMIT) return this.fail('HPE_HEADER_OVERFLOW');
          const head = this.pending.slice(0, at);
          this.pending = this.pending.slice(at + HEAD_END.length);
          if (!this.readHead(head)) return this.fail('HPE_INVALID_CONSTANT');
          break;
        }
        case 'length':
          return this.takeBody() ? this.finish() : 'more';
        case 'chunk-size': {
          const at = this.pending.indexOf(CR_LF);
          if (at < 0) return this.pending.length > CHUNK_LINE_LIMIT ? this.fail('HPE_INVALID_CHUNK_SIZE') : 'more';
          const size = this.pending.slice(0, at).split(';', 1)[0]?.trim() ?? '';
          this.pending = this.pending.slice(at + CR_LF.length);
          if (!HEX.test(size)) return this.fail('HPE_INVALID_CHUNK_SIZE');
          const bytes = Number.parseInt(size, 16);
          if (bytes === 0) {
            this.stage = 'trailer';
          } else {
            this.stage = 'chunk-data';
            this.remaining = bytes;
          }
          break;
        }
        case 'chunk-data':
          if (!this.takeBody()) return 'more';
          this.stage = 'chunk-end';
          break;
        case 'chunk-end':
          // A chunk's data ends with CRLF, as node's parser insists too.
          if (this.pending.length < CR_LF.length) return 'more';
          if (!this.pending.startsWith(CR_LF)) return this.fail('HPE_STRICT');
          this.pending = this.pending.slice(CR_LF.length);
          this.stage = 'chunk-size';
          break;
        case 'trailer': {
          // Trailer fields are skipped, line by line, to the empty line that ends the body; they count
          // as the body's bytes, so an endless trailer meets the same limit an endless body does.
          const at = this.pending.indexOf(CR_LF);
          if (at < 0) return this.pending.length > HEAD_LIMIT ? this.fail('HPE_HEADER_OVERFLOW') : 'more';
          const empty = at === 0;
          this.bodyBytes += at;
          this.pending = this.pending.slice(at + CR_LF.length);
          if (empty) return this.finish();
          break;
        }
        case 'close':
          this.bodyBytes += this.pending.length;
          this.pending = '';
          return 'more';
        case 'done':
          // Bytes after the answer's end, before a request asked for them: not a connection to keep.
          this.reusable = false;
          return 'done';
        case 'error':
          return 'error';
      }
    }
  }

  /**
   * The status line and the fields a delivery or the framing needs; false when it is not HTTP/1.x.
   * An interim (1xx) head leaves the reader waiting for the next head.
   */
  private readHead(head: string): boolean {
    const first = head.indexOf(CR_LF);
    const matched = STATUS_LINE.exec(first < 0 ? head : head.slice(0, first));
    if (matched === null) return false;
    const status = Number(matched[2]);
    if (status < 200) {
      // 101 would switch protocols, which a delivery never asks for: not an answer to read on.
      return status !== 101;
    }
    let length: string | undefined;
    let chunked = false;
    let encoded = false;
    let close = matched[1] === '0';
    let retryAfter: string | undefined;
    // Field lines one by one, without a list of them: only four names matter, told apart by length first.
    for (let start = first + CR_LF.length; first >= 0 && start <= head.length; ) {
      const next = head.indexOf(CR_LF, start);
      const stop = next < 0 ? head.length : next;
      const colon = head.indexOf(':', start);
      if (colon <= start || colon > stop) return false;
      const size = colon - start;
      if (size === 14 || size === 17 || size === 10 || size === 11) {
        const name = head.slice(start, colon).toLowerCase();
        const value = head.slice(colon + 1, stop).trim();
        if (name === 'content-length') {
          if (!DECIMAL.test(value) || (length !== undefined && length !== value)) return false;
          length = value;
        } else if (name === 'transfer-encoding') {
          // The last coding decides the framing: anything but chunked runs to the close (RFC 9112 §6.3).
          encoded = true;
          chunked = value.toLowerCase().split(',').at(-1)?.trim() === 'chunked';
        } else if (name === 'connection') {
          if (value.toLowerCase().split(',').some((option) => option.trim() === 'close')) close = true;
        } else if (name === 'retry-after') {
          retryAfter ??= value;
        }
      }
      start = stop + CR_LF.length;
    }
    this.status = status;
    this.retryAfter = retryAfter;
    if (status === 204 || status === 304) {
      this.remaining = 0;
      this.stage = 'length';
    } else if (chunked) {
      this.stage = 'chunk-size';
    } else if (length !== undefined && !encoded) {
      this.remaining = Number(length);
      this.stage = 'length';
    } else {
      close = true;
      this.stage = 'close';
    }
    this.reusable = !close;
    return true;
  }

  /** Counts and drops the body bytes read, up to those still to come; true once none are left. */
  private takeBody(): boolean {
    const taken = Math.min(this.remaining, this.pending.length);
    this.remaining -= taken;
    this.bodyBytes += taken;
    this.pending = this.pending.slice(taken);
    return this.remaining === 0;
  }

  private finish(): AnswerState {
    this.stage = 'done';
    if (this.pending !== '') this.reusable = false;
    return 'done';
  }

  private fail(code: string): AnswerState {
    this.stage = 'error';
    this.error = code;
    this.reusable = false;
    return 'error';
  }
}
