/**
 * Malformed DAP frames written as raw bytes to a spawned dist/adapter.js (a
 * bad client must not kill the adapter): each one gets an error response or
 * an output event, the adapter keeps running and answers the next well-formed
 * request. Plus the reader alone, fed byte by byte.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, ChildProcessWithoutNullStreams } from 'node:child_process';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { FrameReader, MalformedFrame } from '../../adapter/framing';
import { repoPath } from '../util/paths';

const ADAPTER = repoPath('dist', 'adapter.js');

function frame(body: string | Buffer, length?: number): Buffer {
  const b = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return Buffer.concat([Buffer.from(`Content-Length: ${length ?? b.length}\r\n\r\n`, 'latin1'), b]);
}

function request(seq: number, command: string, args?: object): Buffer {
  return frame(JSON.stringify({ seq, type: 'request', command, arguments: args }));
}

/** The adapter as a child process, its stdout parsed into messages (a plain parser, not the one under test). */
class RawAdapter {
  readonly proc: ChildProcessWithoutNullStreams;
  readonly messages: DebugProtocol.ProtocolMessage[] = [];
  stderr = '';
  exited: number | null | undefined;
  private out = Buffer.alloc(0);
  private waiters: { pred: (m: DebugProtocol.ProtocolMessage) => boolean; resolve: (m: DebugProtocol.ProtocolMessage) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }[] = [];

  constructor() {
    this.proc = spawn(process.execPath, [ADAPTER], { stdio: 'pipe' });
    this.proc.stderr.on('data', (d: Buffer) => { this.stderr += d.toString(); });
    this.proc.stdout.on('data', (d: Buffer) => this.parse(d));
    this.proc.on('exit', code => {
      this.exited = code;
      for (const w of this.waiters.splice(0)) { clearTimeout(w.timer); w.reject(new Error(`adapter exited (code ${code}) while waiting; stderr: ${this.stderr}`)); }
    });
  }

  private parse(d: Buffer): void {
    this.out = Buffer.concat([this.out, d]);
    for (;;) {
      const end = this.out.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /Content-Length: (\d+)/.exec(this.out.toString('latin1', 0, end));
      assert.ok(m, `adapter wrote a frame without Content-Length: ${this.out.toString('latin1', 0, end)}`);
      const n = Number(m[1]);
      if (this.out.length < end + 4 + n) return;
      const msg = JSON.parse(this.out.toString('utf8', end + 4, end + 4 + n)) as DebugProtocol.ProtocolMessage;
      this.out = this.out.subarray(end + 4 + n);
      this.messages.push(msg);
      for (const w of this.waiters.filter(x => x.pred(msg))) {
        clearTimeout(w.timer);
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve(msg);
      }
    }
  }

  /** the first message (already received or still to come) that satisfies pred */
  waitFor(pred: (m: DebugProtocol.ProtocolMessage) => boolean, what: string): Promise<DebugProtocol.ProtocolMessage> {
    const seen = this.messages.find(pred);
    if (seen) return Promise.resolve(seen);
    if (this.exited !== undefined) return Promise.reject(new Error(`adapter exited (code ${this.exited}) before ${what}; stderr: ${this.stderr}`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr: ${this.stderr}`)), 10_000);
      this.waiters.push({ pred, resolve, reject, timer });
    });
  }

  response(seq: number): Promise<DebugProtocol.Response> {
    return this.waitFor(m => m.type === 'response' && (m as DebugProtocol.Response).request_seq === seq, `the response to request ${seq}`) as Promise<DebugProtocol.Response>;
  }

  /** the n-th (1-based) malformed-frame report: an output event or an error response naming it */
  report(n: number): Promise<string> {
    let count = 0;
    return this.waitFor(m => {
      const text = m.type === 'event' && (m as DebugProtocol.Event).event === 'output' ? (m as DebugProtocol.OutputEvent).body.output
        : m.type === 'response' && !(m as DebugProtocol.Response).success ? (m as DebugProtocol.Response).message ?? '' : '';
      return text.includes('malformed DAP frame') && ++count === n;
    }, `malformed-frame report #${n}`).then(m => m.type === 'event' ? (m as DebugProtocol.OutputEvent).body.output : (m as DebugProtocol.Response).message ?? '');
  }

  write(b: Buffer): void { this.proc.stdin.write(b); }

  /** closes stdin and resolves with the exit code */
  close(): Promise<number | null> {
    if (this.exited !== undefined) return Promise.resolve(this.exited);
    const done = new Promise<number | null>(r => this.proc.once('exit', code => r(code)));
    this.proc.stdin.end();
    return done;
  }
}

/**
 * writes one malformed input and an initialize request, then checks the
 * report (which may only be possible once the next header arrives) and that
 * initialize and a later request are answered
 */
async function survives(bad: Buffer, expect: RegExp): Promise<void> {
  const a = new RawAdapter();
  try {
    a.write(bad);
    a.write(request(2, 'initialize', { adapterID: 'kprobe', pathFormat: 'path', linesStartAt1: true, columnsStartAt1: true }));
    assert.match(await a.report(1), expect);
    const r = await a.response(2);
    assert.equal(r.success, true, r.message);
    assert.equal(r.command, 'initialize');
    a.write(request(3, 'threads'));
    assert.equal((await a.response(3)).command, 'threads');
    assert.equal(a.exited, undefined, 'the adapter is still running');
  } finally {
    await a.close();
  }
}

describe('adapter framing: malformed frames do not end the session (dist/adapter.js over stdio)', () => {
  test('a body that is not JSON', () => survives(frame('{not json'), /not JSON/));

  test('a body that is JSON null', () => survives(frame('null'), /body is null/));

  test('a JSON body that is not a DAP message (an array, a request without command)', async () => {
    await survives(frame('[1,2]'), /an array/);
    await survives(frame('{"seq":1,"type":"request"}'), /"command" is missing/);
  });

  test('a Content-Length shorter than the body: reported, the rest is skipped up to the next header', () =>
    survives(frame('{"seq":1,"type":"request","command":"threads"}', 5), /not JSON/));

  test('a Content-Length longer than the body: dropped at the next header instead of swallowing the next request', () =>
    survives(frame('{"seq":1,"type":"request","command":"threads"}', 400), /Content-Length longer than the body/));

  test('a Content-Length longer than the body and no bytes after it: reported once the stream is quiet, not held until the next bytes', async () => {
    const a = new RawAdapter();
    try {
      a.write(frame('{"seq":1,"type":"request","command":"threads"}', 400));
      assert.match(await a.report(1), /ended after 46 of its 400 byte\(s\).*no more bytes came/);
      a.write(request(2, 'initialize', { adapterID: 'kprobe', pathFormat: 'path' }));
      assert.equal((await a.response(2)).success, true);
      a.write(request(3, 'threads'));
      assert.equal((await a.response(3)).success, true);
    } finally {
      await a.close();
    }
  });

  test('a request whose seq is not an integer gets an error response echoing that seq', async () => {
    const a = new RawAdapter();
    try {
      a.write(frame('{"seq":"a1","type":"request","command":"threads"}'));
      a.write(frame('{"seq":1.5,"type":"request","command":"threads"}'));
      for (const seq of ['a1', 1.5]) {
        const r = await a.waitFor(m => m.type === 'response' && (m as DebugProtocol.Response).request_seq === seq, `the response to seq ${seq}`) as DebugProtocol.Response;
        assert.equal(r.success, false);
        assert.equal(r.command, 'threads');
        assert.match(r.message ?? '', /"seq" is .* not an integer/);
      }
      a.write(request(3, 'initialize', { adapterID: 'kprobe', pathFormat: 'path' }));
      assert.equal((await a.response(3)).success, true);
    } finally {
      await a.close();
    }
  });

  test('a body that is not UTF-8 gets an error response to its request', async () => {
    const a = new RawAdapter();
    try {
      const body = Buffer.concat([Buffer.from('{"seq":7,"type":"request","command":"evaluate","arguments":{"expression":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}}')]);
      a.write(frame(body));
      const r = await a.response(7);
      assert.equal(r.success, false);
      assert.equal(r.command, 'evaluate');
      assert.match(r.message ?? '', /not valid UTF-8/);
      a.write(request(8, 'initialize', { adapterID: 'kprobe', pathFormat: 'path' }));
      assert.equal((await a.response(8)).success, true);
    } finally {
      await a.close();
    }
  });

  test('Content-Length: abc, then a normal frame: framing resynchronizes', () =>
    survives(Buffer.from('Content-Length: abc\r\n\r\n{"seq":1,"type":"request","command":"threads"}', 'latin1'), /Content-Length "abc" is not a byte count/));

  test('bytes outside any frame', () => survives(Buffer.from('hello\r\n\r\n', 'latin1'), /outside any frame/));

  test('a launch request without arguments gets an error response naming what is missing', async () => {
    const a = new RawAdapter();
    try {
      a.write(request(1, 'initialize', { adapterID: 'kprobe', pathFormat: 'path' }));
      a.write(frame('{"seq":2,"type":"request","command":"launch"}'));
      const r = await a.response(2);
      assert.equal(r.success, false);
      assert.match(r.message ?? '', /program/);
      a.write(request(3, 'threads'));
      assert.equal((await a.response(3)).success, true);
    } finally {
      await a.close();
    }
  });

  test('every kind in one stream, then requests still answered; closing stdin ends the adapter', async () => {
    const a = new RawAdapter();
    a.write(Buffer.concat([
      frame('{not json'), frame('null'), Buffer.from('Content-Length: abc\r\n\r\n{}', 'latin1'),
      frame(Buffer.from([0xc3, 0x28])), frame('{"seq":1,"type":"request","command":"threads"}', 3),
    ]));
    assert.ok(await a.report(5));
    a.write(request(9, 'initialize', { adapterID: 'kprobe', pathFormat: 'path' }));
    assert.equal((await a.response(9)).success, true);
    assert.equal(await a.close(), 0);
  });
});

describe('FrameReader', () => {
  function read(chunks: Buffer[]): { messages: DebugProtocol.ProtocolMessage[]; bad: MalformedFrame[] } {
    const messages: DebugProtocol.ProtocolMessage[] = [];
    const bad: MalformedFrame[] = [];
    const r = new FrameReader({ message: m => messages.push(m), malformed: f => bad.push(f) });
    for (const c of chunks) r.push(c);
    return { messages, bad };
  }

  test('frames split at every byte, with a multi-byte UTF-8 character and an extra header line', () => {
    const one = frame('{"seq":1,"type":"request","command":"evaluate","arguments":{"expression":"é→"}}');
    const body2 = '{"seq":2,"type":"event","event":"x"}';
    const two = Buffer.from(`Content-Length: ${body2.length}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${body2}`, 'latin1');
    const all = Buffer.concat([one, two]);
    const { messages, bad } = read([...all].map(b => Buffer.from([b])));
    assert.deepEqual(bad, []);
    assert.deepEqual(messages.map(m => m.seq), [1, 2]);
    const whole = read([all]);
    assert.deepEqual(whole.messages.map(m => m.seq), [1, 2]);
    assert.equal((whole.messages[0] as DebugProtocol.EvaluateRequest).arguments.expression, 'é→');
  });

  test('a malformed frame is reported once; its remains up to the next header are skipped silently', () => {
    const { messages, bad } = read([frame('{"seq":1,"type":"request","command":"threads"}', 5), request(2, 'threads')]);
    assert.equal(bad.length, 1);
    assert.match(bad[0].reason, /not JSON/);
    assert.deepEqual(messages.map(m => m.seq), [2]);
  });

  test('a header whose next line is not a header field: the frame after it is not lost', () => {
    const { messages, bad } = read([Buffer.from('Content-Length: 5\r\n{"seq":1,"type":"request"'), request(4, 'threads')]);
    assert.equal(bad.length, 1);
    assert.match(bad[0].reason, /is not a "Name: value" field/);
    assert.deepEqual(messages.map(m => m.seq), [4]);
  });

  test('seeded fuzz: junk between frames, random chunking: every well-formed frame after junk is delivered, in order', () => {
    let seed = 0x2545f491;
    const rnd = (n: number): number => { seed = (Math.imul(seed, 1103515245) + 12345) >>> 0; return (seed >>> 8) % n; };
    const alphabet = Buffer.from('\r\n{}":,Content-Length 0123456789null\xff\xc3', 'latin1');
    const parts: Buffer[] = [];
    const expected: number[] = [];
    for (let seq = 1; seq <= 300; seq++) {
      if (rnd(3) === 0) parts.push(Buffer.from(Array.from({ length: 1 + rnd(40) }, () => alphabet[rnd(alphabet.length)])));
      parts.push(request(seq, 'threads'));
      expected.push(seq);
    }
    const all = Buffer.concat(parts);
    const chunks: Buffer[] = [];
    for (let at = 0; at < all.length;) { const n = 1 + rnd(64); chunks.push(all.subarray(at, at + n)); at += n; }
    const { messages } = read(chunks);
    assert.deepEqual(messages.map(m => m.seq), expected);
  });

  test('a Content-Length over the limit is refused before its body is buffered', () => {
    const { messages, bad } = read([Buffer.from('Content-Length: 99999999999\r\n\r\n{}'), request(3, 'threads')]);
    assert.match(bad[0].reason, /not a byte count/);
    assert.deepEqual(messages.map(m => m.seq), [3]);
  });
});
