/**
 * Gutter kprobes on the full-system PC registered by the guest kernel's own
 * engine: a logpoint, or a breakpoint in Kretprobe mode, becomes a kprobe
 * (or kretprobe) that kprobe-debug's agent module in the guest
 * (test/linux/agent/kprobe_agent.c) registers with the guest's
 * register_kprobe / register_kretprobe at symbol+offset, through the
 * machine's agent channel (system/devices/agentChannel.ts, I/O ports
 * 0x7e0-0x7e7). The requests wait in the channel until the agent polls it
 * (so a logpoint set before `insmod /root/kprobe_agent.ko` is registered
 * when the agent starts); the guest's answer (0 or -errno: Linux's own
 * rules, e.g. -EINVAL for a blacklisted address) comes back as a reply.
 *
 * Each hit arrives from inside the guest's kprobe handler with its struct
 * pt_regs address: the message's `{...}` parts are read from it then (the
 * machine stands between two instructions of the handler):
 *   {$retval}          the return value (regs->ax, signed)
 *   {$comm} {$pid}     the current task
 *   {$rdi} {$di} ...   a register of pt_regs (hex)
 *   {name}             a parameter or local of the probed function (the
 *                      vmlinux's DWARF at the probed address, registers
 *                      from pt_regs, memory through the CPU's page tables)
 */
import type { ElfImage } from '../elf/types';
import type { AgentChannel, AgentHit, AgentReply } from '../system/devices/agentChannel';
import type { GuestPages } from './linuxPages';
import type { DebuggerProbe } from './linuxProbeRows';
import { frameVariables } from './variables';

/** the agent's MAX_PROBES */
const SLOTS = 64;
/** pt_regs members by DWARF register number 0-16 (System V x86_64) */
const DWARF_REGS = ['ax', 'dx', 'cx', 'bx', 'si', 'di', 'bp', 'sp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15', 'ip'];
const ALIASES: Record<string, string> = { rax: 'ax', rbx: 'bx', rcx: 'cx', rdx: 'dx', rsi: 'si', rdi: 'di', rbp: 'bp', rsp: 'sp', rip: 'ip', eflags: 'flags', rflags: 'flags' };
const ERRNO: Record<number, string> = { [-22]: 'EINVAL', [-2]: 'ENOENT', [-17]: 'EEXIST', [-12]: 'ENOMEM', [-16]: 'EBUSY', [-28]: 'ENOSPC', [-84]: 'EILSEQ', [-95]: 'EOPNOTSUPP' };

/** one gutter probe the debugger asked for */
export interface AgentProbeRequest {
  /** the DAP breakpoint id */
  bpId: number;
  /** the probed address (a kretprobe: any address in the function) */
  address: bigint;
  ret: boolean;
  /** the logpoint's message (absent: a Kretprobe-mode breakpoint without one prints the return value) */
  message?: string;
  source?: { path: string; line: number };
}

/** what the debugger is told of a gutter probe */
export interface AgentProbeStatus { bpId: number; verified: boolean; message: string }

interface Slot {
  id: number;
  req: AgentProbeRequest;
  symbol: string;
  offset: bigint;
  /** the probed address (a kretprobe: the function's entry) */
  at: bigint;
  kprobe?: bigint;
  result?: number;
  hits: number;
}

/** what the manager needs of the machine at a hit */
export interface AgentHitContext {
  readonly vmlinux: ElfImage;
  /** the CPU running the handler: its page tables and per-CPU area */
  pages(): GuestPages;
  /** a pt_regs member's offset (the vmlinux's DWARF) */
  ptRegsOffset(member: string): bigint;
  task(): { comm: string; pid: number } | undefined;
}

export class LinuxAgentProbes {
  private readonly slots = new Map<number, Slot>();
  /** per slot id, the requests whose replies are still to come, oldest first */
  private readonly expected = new Map<number, ('register' | 'other')[]>();
  private readonly groups = new Map<string, Slot[]>();
  /** a hit's message or a registration's outcome */
  onOutput: ((text: string) => void) | null = null;
  onStatus: ((s: AgentProbeStatus) => void) | null = null;

  constructor(private readonly channel: AgentChannel, private readonly ctx: AgentHitContext) {
    channel.onReply = r => this.reply(r);
    channel.onHit = h => this.hit(h);
  }

  /**
   * Replace the gutter probes of `group` (a source file): the ones asked
   * again at the same place keep their registration (a changed message is
   * used from the next hit); the others are unregistered in the guest.
   * Returns per request its status now (verified when already registered;
   * else pending on the agent's reply, or why not).
   */
  set(group: string, wanted: readonly AgentProbeRequest[]): AgentProbeStatus[] {
    const old = this.groups.get(group) ?? [];
    const kept: Slot[] = [];
    const out: AgentProbeStatus[] = [];
    const reuse = new Set<Slot>();
    for (const w of wanted) {
      const site = this.site(w);
      if (typeof site === 'string') { out.push({ bpId: w.bpId, verified: false, message: site }); continue; }
      const same = old.find(s => !reuse.has(s) && s.at === site.at && s.req.ret === w.ret);
      if (same) {
        reuse.add(same);
        same.req = { ...w };
        kept.push(same);
        out.push(this.status(same));
        continue;
      }
      const id = this.freeId();
      if (id === undefined) { out.push({ bpId: w.bpId, verified: false, message: `the agent holds at most ${SLOTS} probes` }); continue; }
      const slot: Slot = { id, req: { ...w }, symbol: site.symbol, offset: site.offset, at: site.at, hits: 0 };
      this.slots.set(id, slot);
      this.expect(id, 'register');
      this.channel.register(id, site.symbol, Number(site.offset), w.ret, 0);
      kept.push(slot);
      out.push(this.status(slot));
    }
    for (const s of old) {
      if (reuse.has(s)) continue;
      this.slots.delete(s.id);
      this.expect(s.id, 'other');
      this.channel.unregister(s.id);
    }
    this.groups.set(group, kept);
    return out;
  }

  /** the gutter probes the guest registered, for the Kprobes view's rows */
  debuggerProbes(): DebuggerProbe[] {
    return [...this.slots.values()].filter(s => s.kprobe !== undefined && s.result === 0)
      .map(s => ({ id: s.req.bpId, kprobe: s.kprobe!, hits: s.hits, source: s.req.source }));
  }

  private site(w: AgentProbeRequest): { symbol: string; offset: bigint; at: bigint } | string {
    const r = this.ctx.vmlinux.symbols.resolve(w.address);
    if (!r) return `0x${w.address.toString(16)} is in no function of the vmlinux (the agent probes kernel text by symbol)`;
    return w.ret ? { symbol: r.sym.name, offset: 0n, at: r.sym.value } : { symbol: r.sym.name, offset: r.offset, at: w.address };
  }

  private status(s: Slot): AgentProbeStatus {
    const what = `${s.req.ret ? 'kretprobe' : 'kprobe'} ${s.symbol}+0x${s.offset.toString(16)}`;
    if (s.result === undefined) return { bpId: s.req.bpId, verified: false, message: `${what}: waiting for the guest's agent to register it (load it: >insmod /root/kprobe_agent.ko)` };
    if (s.result !== 0) return { bpId: s.req.bpId, verified: false, message: `${what}: the guest's register_${s.req.ret ? 'kretprobe' : 'kprobe'} returned ${s.result}${ERRNO[s.result] ? ` (-${ERRNO[s.result]})` : ''}` };
    return { bpId: s.req.bpId, verified: true, message: `${what}: registered by the guest's kprobes` };
  }

  private freeId(): number | undefined {
    for (let i = 0; i < SLOTS; i++) if (!this.slots.has(i) && !(this.expected.get(i)?.length)) return i;
    for (let i = 0; i < SLOTS; i++) if (!this.slots.has(i)) return i;
    return undefined;
  }

  private expect(id: number, what: 'register' | 'other'): void {
    const q = this.expected.get(id) ?? [];
    q.push(what);
    this.expected.set(id, q);
  }

  private reply(r: AgentReply): void {
    const what = this.expected.get(r.id)?.shift();
    if (what !== 'register') return;
    const s = this.slots.get(r.id);
    if (!s) return;
    s.result = r.result;
    if (r.result === 0) s.kprobe = r.kprobe;
    const st = this.status(s);
    this.onStatus?.(st);
    if (r.result !== 0) this.onOutput?.(`kprobe: ${st.message}\n`);
  }

  private hit(h: AgentHit): void {
    const s = this.slots.get(h.id);
    if (!s || s.kprobe === undefined) return;
    s.hits++;
    const msg = s.req.message ?? (s.req.ret ? `${s.symbol} returned {$retval}` : `${s.symbol}+0x${s.offset.toString(16)} hit`);
    let text: string;
    try {
      text = this.format(msg, s, h);
    } catch (e) {
      text = `${msg} (the guest's pt_regs at 0x${h.regs.toString(16)} cannot be read: ${(e as Error).message})`;
    }
    this.onOutput?.(`${text}\n`);
  }

  private format(msg: string, s: Slot, h: AgentHit): string {
    const pages = this.ctx.pages();
    const reg = (name: string): bigint => {
      const v = pages.read64(h.regs + this.ctx.ptRegsOffset(name));
      if (v === undefined) throw new Error(`pt_regs->${name} is not mapped`);
      return v;
    };
    let vars: Map<string, string> | undefined;
    const variable = (name: string): string | undefined => {
      if (s.req.ret) return undefined;
      if (!vars) {
        vars = new Map();
        const regs = new Map<number, bigint>();
        DWARF_REGS.forEach((r, d) => { if (r !== 'ip') regs.set(d, reg(r)); });
        regs.set(16, s.at);
        const read = (a: bigint, n: number): Uint8Array | undefined => { const b = pages.read(a, n); return b.length === n ? b : undefined; };
        const fv = frameVariables(this.ctx.vmlinux, { pc: s.at, level: 0, regs }, read);
        if (fv.ok) for (const v of [...fv.params, ...fv.locals]) vars.set(v.name, v.value);
      }
      return vars.get(name);
    };
    return msg.replace(/\{([^{}]*)\}/g, (whole, inner: string) => {
      const e = inner.trim();
      if (e === '$retval') return BigInt.asIntN(64, reg('ax')).toString();
      if (e === '$comm' || e === '$pid') { const t = this.ctx.task(); return t ? (e === '$comm' ? t.comm : String(t.pid)) : '?'; }
      const r = /^(?:\$|regs->)(\w+)$/.exec(e);
      if (r) {
        const name = ALIASES[r[1]] ?? r[1];
        try { return `0x${reg(name).toString(16)}`; } catch { return `<no register ${r[1]}>`; }
      }
      if (/^[A-Za-z_]\w*$/.test(e)) return variable(e) ?? `<${e}: ${s.req.ret ? 'a kretprobe has the return value only' : 'not a variable here'}>`;
      return whole;
    });
  }
}
