/**
 * The debugger's end of the channel to kprobe-debug's agent module in a
 * Linux guest (test/linux/agent/kprobe_agent.c, which documents the
 * protocol): two 32-bit I/O ports, AGENT_PORT (words) and AGENT_PORT + 4
 * (data). The debugger queues requests (register a kprobe or kretprobe at
 * symbol+offset, unregister, enable, disable); the agent's kernel thread
 * polls the word port, reads each request and its data, and calls the
 * guest's own register_kprobe & co.; its replies and the probes' hits
 * arrive as events: data words, then the event word.
 *
 * Wiring: PcMachine registers one as `machine.agent` at AGENT_PORT (free
 * ports on the PC: nothing else decodes 0x7e0-0x7e7).
 */
import type { PortDevice } from './ioBus';

export const AGENT_PORT = 0x7e0;
export const AGENT_PORTS = 8;

export const AGENT_REQ = { register: 1, registerRet: 2, unregister: 3, enable: 4, disable: 5, knob: 6, probeOp: 7 } as const;
const EV_REPLY = 0x81, EV_HIT = 0x82, EV_RETURN = 0x83;

export interface AgentReply { readonly id: number; readonly result: number; readonly kprobe: bigint }
export interface AgentHit { readonly id: number; readonly kind: 'entry' | 'return'; readonly regs: bigint; readonly kprobe: bigint }

export class AgentChannel implements PortDevice {
  readonly name = 'kprobe agent channel';
  readonly byteWide = false;
  private readonly requests: { word: number; data: number[] }[] = [];
  private current: number[] = [];
  private event: number[] = [];
  onReply: ((r: AgentReply) => void) | null = null;
  onHit: ((h: AgentHit) => void) | null = null;
  /** events the agent sent that this end could not read (a wrong count of data words) */
  readonly malformed: string[] = [];

  constructor(readonly base = AGENT_PORT) {}

  /** queue a probe at symbol+offset in slot id (< 64); the reply comes through onReply */
  register(id: number, symbol: string, offset = 0, ret = false, maxactive = 0): void {
    const name = new TextEncoder().encode(symbol);
    const words: number[] = [];
    for (let i = 0; i < name.length; i += 4) words.push(name[i] | (name[i + 1] ?? 0) << 8 | (name[i + 2] ?? 0) << 16 | ((name[i + 3] ?? 0) << 24) >>> 0);
    const head = ret ? [maxactive, offset, name.length] : [offset, name.length];
    this.queue(ret ? AGENT_REQ.registerRet : AGENT_REQ.register, id, [...head, ...words]);
  }

  unregister(id: number): void { this.queue(AGENT_REQ.unregister, id, []); }
  enable(id: number): void { this.queue(AGENT_REQ.enable, id, []); }
  disable(id: number): void { this.queue(AGENT_REQ.disable, id, []); }
  /** write 0 or 1 into /sys/kernel/debug/kprobes/enabled ('enabled') or the sysctl debug.kprobes-optimization; the reply echoes id */
  knob(id: number, which: 'enabled' | 'optimization', value: boolean): void { this.queue(AGENT_REQ.knob, id, [which === 'enabled' ? 0 : 1, value ? 1 : 0]); }
  /** enable, disable or unregister any probe registered in the guest by its struct kprobe (and struct kretprobe, 0n for a kprobe); the reply echoes id */
  probeOp(id: number, op: 'unregister' | 'enable' | 'disable', kprobe: bigint, kretprobe = 0n): void {
    const lo = (v: bigint): number => Number(v & 0xffffffffn), hi = (v: bigint): number => Number((v >> 32n) & 0xffffffffn);
    this.queue(AGENT_REQ.probeOp, id, [AGENT_REQ[op], lo(kprobe), hi(kprobe), lo(kretprobe), hi(kretprobe)]);
  }

  /** requests the agent has not taken yet */
  get pending(): number { return this.requests.length; }

  private queue(op: number, id: number, data: number[]): void {
    if (!Number.isInteger(id) || id < 0 || id >= 1 << 24) throw new RangeError(`agent probe id ${id}: 0..2^24-1`);
    this.requests.push({ word: (op << 24 | id) >>> 0, data });
  }

  in(port: number, size: 1 | 2 | 4): number {
    if (size !== 4) return 0;
    if (port === this.base) {
      const r = this.requests.shift();
      if (!r) return 0;
      this.current = r.data;
      return r.word;
    }
    if (port === this.base + 4) return (this.current.shift() ?? 0) >>> 0;
    return 0;
  }

  out(port: number, size: 1 | 2 | 4, value: number): void {
    if (size !== 4) return;
    if (port === this.base + 4) { this.event.push(value >>> 0); return; }
    if (port !== this.base) return;
    const d = this.event;
    this.event = [];
    const op = value >>> 24, id = value & 0xffffff;
    const q = (lo: number, hi: number): bigint => BigInt(hi >>> 0) << 32n | BigInt(lo >>> 0);
    if (op === EV_REPLY && d.length === 3) this.onReply?.({ id, result: d[0] | 0, kprobe: q(d[1], d[2]) });
    else if ((op === EV_HIT || op === EV_RETURN) && d.length === 4) this.onHit?.({ id, kind: op === EV_HIT ? 'entry' : 'return', regs: q(d[0], d[1]), kprobe: q(d[2], d[3]) });
    else this.malformed.push(`event 0x${(value >>> 0).toString(16)} with ${d.length} data words`);
  }
}
