/**
 * DAP base-protocol framing (`Content-Length: N\r\n\r\n<N bytes of UTF-8 JSON>`)
 * that survives bad input. @vscode/debugadapter's own reader turns one
 * malformed frame (a body that is not JSON, `null`, a short Content-Length,
 * bytes that are not UTF-8) into an 'error' event, and DebugSession answers
 * every 'error' event with process.exit(0); a non-numeric Content-Length
 * leaves it reading bodies as headers. This reader hands the session only
 * well-formed messages and reports every malformed frame instead:
 *
 * - a frame whose body is not a DAP message is reported once and dropped;
 * - after that, bytes up to the next `Content-Length:` header are skipped
 *   (the stream resynchronizes there);
 * - a body that is still incomplete but already holds a complete next header
 *   (`Content-Length: 12\r\n\r\n` cannot occur inside JSON: raw CR/LF are not
 *   allowed in JSON strings and `C` starts no JSON token) had a Content-Length
 *   longer than its bytes: it is dropped at that header instead of swallowing
 *   the next request;
 * - a body that stays shorter than its Content-Length with no more bytes
 *   coming (FrameReader.stalled(), called by serveFramed after a quiet
 *   while) is reported and dropped instead of waiting for bytes that may
 *   never come;
 * - a request whose "seq" is not an integer is reported, and answered with an
 *   error response that echoes the seq it gave (a number or a string).
 */
import type { Readable, Writable } from 'node:stream';
import { PassThrough } from 'node:stream';
import type { DebugProtocol } from '@vscode/debugprotocol';

const HEADER = Buffer.from('Content-Length:', 'latin1');
const HEADER_END = Buffer.from('\r\n\r\n', 'latin1');
/** a complete header, as it may appear inside a body whose Content-Length was too long */
const COMPLETE_HEADER = /Content-Length: *\d+\r\n(?:[^\r\n]*\r\n)*\r\n/;
/** longest header block accepted before giving up on it */
const MAX_HEADER_BYTES = 1024;
/** largest body accepted (a 10,000-breakpoint setBreakpoints is a few MB) */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * The identity of a request whose frame was malformed, when it could be read:
 * it gets an error response. `seq` is what the request gave (a non-integer
 * one is echoed as it came: the client matches its own value).
 */
export interface RequestIdentity {
  seq: number | string;
  command: string;
}

export interface MalformedFrame {
  /** what was wrong, e.g. `body is not JSON (Unexpected token n ...)` */
  reason: string;
  request?: RequestIdentity;
}

export interface FrameSink {
  message(msg: DebugProtocol.ProtocolMessage): void;
  malformed(frame: MalformedFrame): void;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

function preview(text: string): string {
  const t = text.length > 40 ? text.slice(0, 40) + '...' : text;
  return JSON.stringify(t);
}

function identity(v: unknown): RequestIdentity | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  if (o.type !== 'request' || typeof o.command !== 'string') return undefined;
  if (typeof o.seq === 'number' && Number.isFinite(o.seq)) return { seq: o.seq, command: o.command };
  if (typeof o.seq === 'string' && o.seq.length <= 64) return { seq: o.seq, command: o.command };
  return undefined;
}

/** Why `v` (a parsed body) is not a DAP protocol message, or undefined when it is one. */
export function protocolMessageProblem(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) {
    return `body is ${v === null ? 'null' : Array.isArray(v) ? 'an array' : `a ${typeof v}`}, not a DAP message object`;
  }
  const o = v as Record<string, unknown>;
  if (o.type !== 'request' && o.type !== 'response' && o.type !== 'event') {
    return `message "type" is ${JSON.stringify(o.type) ?? 'missing'}, not "request", "response" or "event"`;
  }
  if (!Number.isSafeInteger(o.seq)) return `message "seq" is ${JSON.stringify(o.seq) ?? 'missing'}, not an integer`;
  if (o.type === 'request') {
    if (typeof o.command !== 'string') return `request "command" is ${JSON.stringify(o.command) ?? 'missing'}, not a string`;
    if (o.arguments !== undefined && (typeof o.arguments !== 'object' || o.arguments === null || Array.isArray(o.arguments))) {
      return `request "arguments" of ${o.command} is not an object`;
    }
  }
  if (o.type === 'response' && !Number.isSafeInteger(o.request_seq)) return 'response "request_seq" is not an integer';
  if (o.type === 'event' && typeof o.event !== 'string') return 'event "event" is not a string';
  return undefined;
}

/** Incremental reader: push() the bytes as they arrive. */
export class FrameReader {
  private buf: Buffer = Buffer.alloc(0);
  /** byte count of the body being read, or -1 while looking for a header */
  private contentLength = -1;
  /** where the look-ahead for a next header inside an incomplete body resumes */
  private scanned = 0;
  /** set after a malformed frame: the bytes up to the next header are its remains, skipped silently */
  private resyncing = false;

  constructor(private readonly sink: FrameSink) {}

  /** Whether a frame's body is being read and not complete yet. */
  get waitingForBody(): boolean { return this.contentLength >= 0 && this.buf.length < this.contentLength; }

  /**
   * No more bytes came while a body was incomplete: its Content-Length was
   * longer than what was sent. The partial frame is reported and dropped
   * (the bytes still to come, up to the next header, are its remains).
   */
  stalled(quietMs: number): void {
    if (!this.waitingForBody) return;
    const n = this.contentLength, got = this.buf.length;
    this.contentLength = -1;
    this.buf = Buffer.alloc(0);
    this.report({ reason: `frame body ended after ${got} of its ${n} byte(s) (Content-Length longer than the body): no more bytes came for ${quietMs} ms` });
  }

  push(data: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, data]) : data;
    while (this.contentLength >= 0 ? this.readBody() : this.readHeader()) { /* next frame */ }
  }

  private report(frame: MalformedFrame): void {
    this.resyncing = true;
    this.sink.malformed(frame);
  }

  /** Skips `n` bytes that belong to no frame. */
  private skip(n: number): void {
    const junk = this.buf.subarray(0, n);
    if (!this.resyncing && /\S/.test(junk.toString('latin1'))) {
      this.report({ reason: `${n} byte(s) outside any frame (${preview(junk.toString('latin1'))}) skipped up to the next Content-Length header` });
    }
    this.buf = this.buf.subarray(n);
  }

  private readHeader(): boolean {
    const at = this.buf.indexOf(HEADER);
    if (at < 0) {
      // keep a tail that may be the start of a header split across chunks
      let keep = Math.min(this.buf.length, HEADER.length - 1);
      while (keep > 0 && !this.buf.subarray(this.buf.length - keep).equals(HEADER.subarray(0, keep))) keep--;
      if (this.buf.length > keep) this.skip(this.buf.length - keep);
      return false;
    }
    if (at > 0) this.skip(at);
    const end = this.buf.indexOf(HEADER_END);
    if (end < 0) {
      if (this.buf.length <= MAX_HEADER_BYTES) return false;
      this.report({ reason: `header block longer than ${MAX_HEADER_BYTES} bytes without an empty line` });
      this.buf = this.buf.subarray(HEADER.length);
      return true;
    }
    const lineEnd = this.buf.indexOf('\r\n');
    const value = this.buf.toString('latin1', HEADER.length, lineEnd).trim();
    if (!/^\d{1,10}$/.test(value) || Number(value) > MAX_BODY_BYTES) {
      this.report({ reason: `Content-Length ${preview(value)} is not a byte count (0..${MAX_BODY_BYTES})` });
      // resume right after this header line: a real header may follow in the same block
      this.buf = this.buf.subarray(lineEnd);
      return true;
    }
    // further header lines (Content-Type) must be `Name: value`: anything else means this header was cut short
    const bad = this.buf.toString('latin1', lineEnd + 2, end).split('\r\n').find(l => !/^[A-Za-z][A-Za-z0-9-]*:/.test(l) || l.includes('Content-Length:'));
    if (end > lineEnd && bad !== undefined) {
      this.report({ reason: `header line ${preview(bad)} after Content-Length ${value} is not a "Name: value" field` });
      this.buf = this.buf.subarray(lineEnd);
      return true;
    }
    this.buf = this.buf.subarray(end + HEADER_END.length);
    this.contentLength = Number(value);
    this.scanned = 0;
    return true;
  }

  private readBody(): boolean {
    const n = this.contentLength;
    if (this.buf.length < n) {
      // the declared length may be longer than the body: a complete next header already here says so
      const from = Math.max(0, this.scanned - MAX_HEADER_BYTES);
      const m = COMPLETE_HEADER.exec(this.buf.toString('latin1', from));
      this.scanned = this.buf.length;
      if (!m) return false;
      const at = from + m.index;
      this.contentLength = -1;
      this.report({ reason: `frame body ended after ${at} of its ${n} byte(s) (Content-Length longer than the body): a new header follows` });
      this.buf = this.buf.subarray(at);
      return true;
    }
    const body = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    this.contentLength = -1;
    this.deliver(body);
    return true;
  }

  private deliver(body: Buffer): void {
    if (body.length === 0) return this.report({ reason: 'empty frame body (Content-Length: 0)' });
    let text: string;
    try {
      text = utf8.decode(body);
    } catch {
      const lossy = body.toString('utf8');
      let request: RequestIdentity | undefined;
      try { request = identity(JSON.parse(lossy)); } catch { request = undefined; }
      return this.report({ reason: `frame body is not valid UTF-8 (${body.length} bytes, ${preview(lossy)})`, request });
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return this.report({ reason: `frame body is not JSON (${e instanceof Error ? e.message : String(e)}): ${preview(text)}` });
    }
    const problem = protocolMessageProblem(value);
    if (problem) return this.report({ reason: problem, request: identity(value) });
    this.resyncing = false;
    const msg = value as DebugProtocol.ProtocolMessage;
    // DebugSession's handlers dereference `arguments`; a request without them gets an empty object (each handler then names what is missing)
    if (msg.type === 'request' && (msg as DebugProtocol.Request).arguments === undefined) (msg as DebugProtocol.Request).arguments = {};
    this.sink.message(msg);
  }
}

/** What serveFramed needs of a DebugSession (ProtocolServer's public face). */
export interface FramedSession {
  start(inStream: NodeJS.ReadableStream, outStream: NodeJS.WritableStream): void;
  handleMessage(msg: DebugProtocol.ProtocolMessage): void;
  sendResponse(response: DebugProtocol.Response): void;
  sendEvent(event: DebugProtocol.Event): void;
}

/**
 * Runs `session` over `input`/`output` with the robust reader: well-formed
 * messages go to session.handleMessage(); a malformed frame gets an error
 * response when its request could be identified, otherwise an `output`
 * event (category stderr), and a line through `log`. The session still sees
 * `input` close (its 'close' ends the session as before).
 */
/** How long an incomplete frame body waits for more bytes before it is reported and dropped. */
export const BODY_STALL_MS = 2000;

export function serveFramed(session: FramedSession, input: Readable, output: Writable, log: (line: string) => void, stallMs = BODY_STALL_MS): FrameReader {
  const reader = new FrameReader({
    message: msg => {
      try {
        session.handleMessage(msg);
      } catch (e) {
        log(`kprobe adapter: message ${msg.seq} failed: ${e instanceof Error ? e.message : String(e)}`);
      }
    },
    malformed: frame => {
      const text = `kprobe adapter: malformed DAP frame dropped: ${frame.reason}`;
      log(text);
      if (frame.request) {
        const response: DebugProtocol.ErrorResponse = {
          // a non-integer seq is echoed as the request gave it
          seq: 0, type: 'response', request_seq: frame.request.seq as number, command: frame.request.command,
          success: false, message: text, body: { error: { id: 1900, format: text, showUser: false } },
        };
        session.sendResponse(response);
      } else {
        const event: DebugProtocol.OutputEvent = { seq: 0, type: 'event', event: 'output', body: { category: 'stderr', output: text + '\n' } };
        session.sendEvent(event);
      }
    },
  });
  // the session reads no bytes itself: it gets a stream that only mirrors input's end
  const mirror = new PassThrough();
  let stall: NodeJS.Timeout | undefined;
  input.on('data', (chunk: Buffer | string) => {
    reader.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    if (stall) clearTimeout(stall);
    stall = reader.waitingForBody ? setTimeout(() => reader.stalled(stallMs), stallMs).unref() : undefined;
  });
  input.on('close', () => { if (stall) clearTimeout(stall); mirror.destroy(); });
  input.on('end', () => mirror.end());
  input.on('error', e => mirror.destroy(e));
  session.start(mirror, output);
  input.resume();
  return reader;
}
