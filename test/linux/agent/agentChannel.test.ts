/**
 * The debugger's end of the agent channel (emulator/system/devices/
 * agentChannel.ts) at register level, as kprobe_agent.c reads and writes
 * it: a request word then its data words (the name packed little-endian,
 * four bytes a word), nothing queued reads 0; a reply and a hit are data
 * words then the event word, 64-bit addresses whole; an event with the
 * wrong number of data words is recorded, not delivered; on the port bus.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AgentChannel, AGENT_PORT, AGENT_PORTS, type AgentHit, type AgentReply } from '../../../emulator/system/devices/agentChannel';
import { IoBus } from '../../../emulator/system/devices/ioBus';

test('agent channel: requests as the agent reads them, replies and hits as it writes them', () => {
  const bus = new IoBus();
  const ch = new AgentChannel();
  bus.register(AGENT_PORT, AGENT_PORTS, ch);
  assert.equal(bus.in(AGENT_PORT, 4), 0, 'nothing queued');
  ch.register(3, 'do_sys_openat2', 0x11);
  ch.register(4, 'kernel_clone', 0, true, 20);
  ch.disable(3);
  assert.equal(ch.pending, 3);
  const data = (n: number): number[] => Array.from({ length: n }, () => bus.in(AGENT_PORT + 4, 4));
  assert.equal(bus.in(AGENT_PORT, 4), (1 << 24 | 3) >>> 0);
  const [off, len, ...name] = data(2 + 4);
  assert.deepEqual([off, len], [0x11, 14]);
  const bytes = new Uint8Array(new Uint32Array(name).buffer).slice(0, len);
  assert.equal(new TextDecoder().decode(bytes), 'do_sys_openat2');
  assert.equal(bus.in(AGENT_PORT, 4), (2 << 24 | 4) >>> 0);
  assert.deepEqual(data(3), [20, 0, 12], 'maxactive, offset, length');
  data(3);
  assert.equal(bus.in(AGENT_PORT, 4), (5 << 24 | 3) >>> 0);
  assert.equal(bus.in(AGENT_PORT, 4), 0);
  assert.equal(ch.pending, 0);

  const replies: AgentReply[] = [], hits: AgentHit[] = [];
  ch.onReply = r => replies.push(r);
  ch.onHit = h => hits.push(h);
  for (const w of [-22 >>> 0, 0x81234560, 0xffffffff]) bus.out(AGENT_PORT + 4, 4, w);
  bus.out(AGENT_PORT, 4, (0x81 << 24 | 3) >>> 0);
  assert.deepEqual(replies, [{ id: 3, result: -22, kprobe: 0xffffffff81234560n }]);
  for (const w of [0x0000ff58, 0xffffc900, 0x81234560, 0xffffffff]) bus.out(AGENT_PORT + 4, 4, w);
  bus.out(AGENT_PORT, 4, (0x83 << 24 | 4) >>> 0);
  assert.deepEqual(hits, [{ id: 4, kind: 'return', regs: 0xffffc9000000ff58n, kprobe: 0xffffffff81234560n }]);
  bus.out(AGENT_PORT + 4, 4, 1);
  bus.out(AGENT_PORT, 4, (0x82 << 24 | 1) >>> 0);
  assert.equal(hits.length, 1);
  assert.deepEqual(ch.malformed, ['event 0x82000001 with 1 data words']);
  assert.throws(() => ch.enable(1 << 24), /agent probe id 16777216: 0..2\^24-1/);
});

test('agent channel: the knob and any-probe requests as the agent reads them (which, value; op, kprobe, kretprobe as 32-bit halves)', () => {
  const bus = new IoBus();
  const ch = new AgentChannel();
  bus.register(AGENT_PORT, AGENT_PORTS, ch);
  const data = (n: number): number[] => Array.from({ length: n }, () => bus.in(AGENT_PORT + 4, 4));
  ch.knob(0x100001, 'enabled', false);
  ch.knob(0x100002, 'optimization', true);
  ch.probeOp(0x100003, 'disable', 0xffffffffc0402040n);
  ch.probeOp(0x100004, 'unregister', 0xffff888003a1c008n, 0xffff888003a1c000n);
  assert.equal(bus.in(AGENT_PORT, 4), (6 << 24 | 0x100001) >>> 0);
  assert.deepEqual(data(2), [0, 0]);
  assert.equal(bus.in(AGENT_PORT, 4), (6 << 24 | 0x100002) >>> 0);
  assert.deepEqual(data(2), [1, 1]);
  assert.equal(bus.in(AGENT_PORT, 4), (7 << 24 | 0x100003) >>> 0);
  assert.deepEqual(data(5), [5, 0xc0402040, 0xffffffff, 0, 0]);
  assert.equal(bus.in(AGENT_PORT, 4), (7 << 24 | 0x100004) >>> 0);
  assert.deepEqual(data(5), [3, 0x03a1c008, 0xffff8880, 0x03a1c000, 0xffff8880]);
  assert.equal(bus.in(AGENT_PORT, 4), 0);
});
