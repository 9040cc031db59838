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
 * pt_regs address. A condition, or a log message written as a handler
 * snippet (`{ if (regs->si) printk("%s\n", (char *)regs->si); }`), runs in
 * the handler language (emulator/handlers) against that pt_regs in guest
 * memory (linuxAgentEnv.ts: reads and writes); a breakpoint with no log
 * message (a condition, or Kretprobe mode) stops the machine: its hit is
 * kept per CPU, and the handler's next call, agent_stop_point(), is a
 * breakpoint the guest cannot see, where the target shows the probed
 * context (stopAt). A plain message's `{...}` parts are read then (the
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
import { compileHandler, compileLogMessage, HandlerFault, isHandlerSnippetLogMessage } from '../handlers';
import type { CompiledHandler, CompileOptions, Diagnostic, ProbeControlOp } from '../handlers';
import { archByName } from '../arch/registry';
import { programNamesAt } from '../probes/programNames';
import { namesAt } from '../elf/dwarf/scopes';
import { AgentHandlerEnv } from './linuxAgentEnv';
import type { HitLog } from '../trace/hitLog';
import type { LinuxHits } from './linuxHits';

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
  /** the logpoint's message: a plain text with `{...}` parts, or a handler snippet `{ ...; }` (absent: the hit stops the machine) */
  message?: string;
  /** the handler language's condition (a bare expression or a body; non-zero: the hit counts, prints or stops) */
  condition?: string;
  source?: { path: string; line: number };
}

/** a stopping hit the target shows when the CPU reaches agent_stop_point */
export interface AgentStop {
  bpId: number;
  kind: 'entry' | 'return';
  /** the guest's struct pt_regs of the hit */
  regs: bigint;
  /** the probed address (a kretprobe: the function's entry) */
  at: bigint;
  symbol: string;
  offset: bigint;
  hits: number;
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
  condition?: CompiledHandler;
  /** a log message written as a handler snippet */
  snippet?: CompiledHandler;
}

/** what the manager needs of the machine at a hit */
export interface AgentHitContext {
  readonly vmlinux: ElfImage;
  /** the CPU running the handler: its page tables and per-CPU area */
  pages(): GuestPages;
  /** a pt_regs member's offset (the vmlinux's DWARF) */
  ptRegsOffset(member: string): bigint;
  /** a struct kprobe member's offset (the vmlinux's DWARF) */
  kprobeOffset(member: string): bigint;
  task(): { comm: string; pid: number } | undefined;
  /** the CPU running the handler */
  cpu(): number;
  /** the machine's clock (ns) */
  nowNs(): bigint;
  /**
   * Exactly where the machine is at the hit (inside the running CPU's
   * slice): the instructions all CPUs have retired, and the running CPU's
   * own count; the hit's `out` is that CPU's next instruction to retire.
   */
  position(): { g: number; cpu: number; instret: number };
  /** the machine re-executes recorded history (time travel): a hit's snippets run again, silently, and nothing is recorded */
  replaying(): boolean;
}

/** where a hit of the log happened and what the target shows there (go to hit) */
export interface AgentHitPlace {
  /** exactly: instructions all CPUs had retired, and the hit CPU's own count, when its `out` sent the hit */
  g: number;
  cpu: number;
  instret: number;
  /** the stop the target shows at the hit (the probed context from the hit's pt_regs) */
  stop: AgentStop;
  /** the probe stops the machine (its stop at agent_stop_point follows the hit) */
  stops: boolean;
}

/** ids of the requests that are not about a slot (knobs, any probe of the guest): replies echo them */
const CONTROL_IDS = 0x100000;

export class LinuxAgentProbes {
  private readonly slots = new Map<number, Slot>();
  /** per slot id, the requests whose replies are still to come, oldest first */
  private readonly expected = new Map<number, ('register' | 'other')[]>();
  private readonly groups = new Map<string, Slot[]>();
  /** a hit's message or a registration's outcome */
  onOutput: ((text: string) => void) | null = null;
  onStatus: ((s: AgentProbeStatus) => void) | null = null;
  /** the stopping probes went from none to some or back (the target arms agent_stop_point) */
  onStopsWanted: ((wanted: boolean) => void) | null = null;
  /** per CPU, the stopping hit its handler is about to reach agent_stop_point with */
  private readonly pendingStops = new Map<number, AgentStop>();
  private readonly controls = new Map<number, (r: AgentReply) => void>();
  private nextControl = CONTROL_IDS;
  private copts: CompileOptions | undefined;
  /**
   * Every hit of the gutter probes, in hit order (the hit timeline and, from
   * each kretprobe's entry and return on a task, its latency histogram);
   * probe ids are the breakpoints' ids (the Kprobes view's rows).
   */
  get hitLog(): HitLog { return this.hits.log; }
  /** per agent hit of the log (by seq, oldest first), where it happened: the timeline's go to hit travels there */
  private readonly places = new Map<number, AgentHitPlace>();
  /** per kretprobe slot and task, the entry times of the calls not returned yet */
  private readonly entries = new Map<string, number[]>();

  constructor(private readonly channel: AgentChannel, private readonly ctx: AgentHitContext, private readonly hits: LinuxHits) {
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
        const parts = this.compile(w, site.at);
        if (typeof parts === 'string') { out.push({ bpId: w.bpId, verified: false, message: parts }); continue; }
        reuse.add(same);
        same.req = { ...w };
        same.condition = parts.condition;
        same.snippet = parts.snippet;
        kept.push(same);
        out.push(this.status(same));
        continue;
      }
      const parts = this.compile(w, site.at);
      if (typeof parts === 'string') { out.push({ bpId: w.bpId, verified: false, message: parts }); continue; }
      const id = this.freeId();
      if (id === undefined) { out.push({ bpId: w.bpId, verified: false, message: `the agent holds at most ${SLOTS} probes` }); continue; }
      const slot: Slot = { id, req: { ...w }, symbol: site.symbol, offset: site.offset, at: site.at, hits: 0, ...parts };
      this.slots.set(id, slot);
      this.expect(id, 'register');
      this.channel.register(id, site.symbol, Number(site.offset), w.ret, 0);
      kept.push(slot);
      out.push(this.status(slot));
    }
    const before = this.wantsStops();
    for (const s of old) {
      if (reuse.has(s)) continue;
      this.slots.delete(s.id);
      this.expect(s.id, 'other');
      this.channel.unregister(s.id);
    }
    this.groups.set(group, kept);
    const after = this.wantsStops();
    if (before !== after || after) this.onStopsWanted?.(after);
    return out;
  }

  /** the kernel turned out to run moved by KASLR (linuxSlide.ts): the probes asked for before, at link addresses, are where it runs them */
  relocate(toRuntime: (link: bigint) => bigint): void {
    for (const s of this.slots.values()) { s.at = toRuntime(s.at); s.req = { ...s.req, address: toRuntime(s.req.address) }; }
  }

  /** a probe whose hits stop the machine is registered or asked for */
  wantsStops(): boolean { return [...this.slots.values()].some(s => s.req.message === undefined && (s.result === undefined || s.result === 0)); }

  /**
   * The options the handler language compiles a condition or snippet with
   * at `at`: the probed function's parameters and locals there by name.
   * Globals and struct types by name are not offered on a vmlinux: their
   * lookup walks the DWARF of every unit (gigabytes of heap on Debian's).
   */
  private compileOptions(at: bigint | undefined): CompileOptions {
    const arch = archByName('x86_64')!;
    const image = this.ctx.vmlinux;
    this.copts ??= { regNames: arch.regs.map(r => r.name), arch: 'x86_64', charSigned: true, symbolExists: n => image.symbols.lookup(n) !== undefined };
    let names: CompileOptions['programName'];
    let inScope: ReadonlySet<string> = new Set();
    try {
      const scope = at !== undefined ? namesAt(image, at, { skipInlineEntry: true }) : undefined;
      if (scope) { inScope = new Set(scope.names.keys()); names = programNamesAt(image, arch, at!, { skipInlineEntry: true }); }
    } catch { names = undefined; }
    const lookup = names;
    return { ...this.copts, programName: lookup ? n => (inScope.has(n) ? lookup(n) : undefined) : undefined };
  }

  private compile(w: AgentProbeRequest, at: bigint): { condition?: CompiledHandler; snippet?: CompiledHandler } | string {
    const out: { condition?: CompiledHandler; snippet?: CompiledHandler } = {};
    const wantsSnippet = w.message !== undefined && isHandlerSnippetLogMessage(w.message);
    const hasCondition = w.condition !== undefined && w.condition.trim() !== '';
    if (!wantsSnippet && !hasCondition) return out;
    // a kretprobe's context is the return: its names are the globals only
    const opts = this.compileOptions(w.ret ? undefined : at);
    if (hasCondition) {
      const c = compileHandler(w.condition!, 'condition', opts);
      if (!c.handler) return `condition: ${firstError(c.diagnostics)}`;
      out.condition = c.handler;
    }
    if (wantsSnippet) {
      const c = compileLogMessage(w.message!, opts);
      if (!c.handler) return `log message: ${firstError(c.diagnostics)}`;
      out.snippet = c.handler;
    }
    return out;
  }

  // ---- the Kprobes view's actions on the guest (the agent calls Linux's own API in process context)

  /** write /sys/kernel/debug/kprobes/enabled or the sysctl debug.kprobes-optimization in the guest; done gets 0 or -errno */
  knob(which: 'enabled' | 'optimization', value: boolean, done: (result: number) => void): void {
    const id = this.control(r => done(r.result));
    this.channel.knob(id, which, value);
  }

  /** enable_kprobe / disable_kprobe / unregister_k(ret)probe on any probe of the guest by its struct kprobe (and struct kretprobe) */
  probeOp(op: 'unregister' | 'enable' | 'disable', kprobe: bigint, kretprobe: bigint | undefined, done: (result: number) => void): void {
    const own = [...this.slots.values()].find(s => s.kprobe === kprobe);
    if (own) { this.slotOp(own, op, done); return; }
    const id = this.control(r => done(r.result));
    this.channel.probeOp(id, op, kprobe, kretprobe ?? 0n);
  }

  private control(cb: (r: AgentReply) => void): number {
    const id = this.nextControl;
    this.nextControl = this.nextControl >= 0xfffff0 ? CONTROL_IDS : this.nextControl + 1;
    this.controls.set(id, cb);
    return id;
  }

  /** a gutter probe's own enable / disable / unregister (the view's action, or the snippet's disable_kprobe(p) & co.) */
  private slotOp(s: Slot, op: ProbeControlOp, done?: (result: number) => void): void {
    if (op === 'unregister') {
      this.slots.delete(s.id);
      for (const [g, list] of this.groups) this.groups.set(g, list.filter(x => x !== s));
      this.expect(s.id, 'other');
      this.channel.unregister(s.id);
      this.onStatus?.({ bpId: s.req.bpId, verified: false, message: `${s.req.ret ? 'kretprobe' : 'kprobe'} ${s.symbol}+0x${s.offset.toString(16)}: unregistered in the guest (remove the breakpoint, or set it again)` });
      done?.(0);
      return;
    }
    this.expect(s.id, 'other');
    if (op === 'enable') this.channel.enable(s.id); else this.channel.disable(s.id);
    done?.(0);
  }

  /**
   * The CPU reached agent_stop_point: the stopping hit its handler just
   * sent (undefined: none, or its condition said no: the machine goes on).
   */
  stopAt(cpu: number): AgentStop | undefined {
    const p = this.pendingStops.get(cpu);
    this.pendingStops.delete(cpu);
    return p;
  }

  /** the stopping hit CPU `cpu` will show at agent_stop_point, without taking it (reverse continue asks) */
  pendingStop(cpu: number): AgentStop | undefined { return this.pendingStops.get(cpu); }

  /** where hit `seq` of the log happened (undefined: not an agent hit kept) */
  place(seq: number): AgentHitPlace | undefined { return this.places.get(seq); }

  /**
   * The recorded run after instruction count g is discarded (time travel:
   * a change in the past): its hits leave the log, numbering goes on after
   * the last one kept.
   */
  discardAfter(g: number): void {
    const keep = this.hits.discardAfter(g);
    for (const seq of this.places.keys()) if (seq > keep) this.places.delete(seq);
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
    const ctl = this.controls.get(r.id);
    if (ctl) { this.controls.delete(r.id); ctl(r); return; }
    const what = this.expected.get(r.id)?.shift();
    if (what === 'other' && r.result !== 0 && r.result !== -2) this.onOutput?.(`kprobe: the guest's agent answered ${r.result}${ERRNO[r.result] ? ` (-${ERRNO[r.result]})` : ''} for probe slot ${r.id}\n`);
    if (what !== 'register') return;
    const s = this.slots.get(r.id);
    if (!s) return;
    s.result = r.result;
    if (r.result === 0) s.kprobe = r.kprobe;
    const st = this.status(s);
    this.onStatus?.(st);
    if (r.result !== 0) this.onOutput?.(`kprobe: ${st.message}\n`);
    if (s.req.message === undefined) this.onStopsWanted?.(this.wantsStops());
  }

  /**
   * The handler language's environment over the hit's pt_regs. Re-executed
   * (`quiet`): it prints nothing, and a probe control (disable_kprobe(p)
   * & co.) only queues its request for the guest again, as the live run's
   * did (the slot's own bookkeeping was done then).
   */
  private env(s: Slot, h: AgentHit, quiet = false): AgentHandlerEnv {
    return new AgentHandlerEnv({
      vmlinux: this.ctx.vmlinux, pages: this.ctx.pages(), regs: h.regs, ptRegsOffset: m => this.ctx.ptRegsOffset(m),
      task: this.ctx.task(), cpu: this.ctx.cpu(), nowNs: () => this.ctx.nowNs(),
      probe: { addr: s.at, symbol: s.symbol, offset: s.offset, kprobe: h.kprobe }, kprobeOffset: m => this.ctx.kprobeOffset(m),
      printk: text => { if (!quiet) this.print(text); },
      control: op => { if (quiet) this.requeue(s, op); else this.slotOp(s, op); return 0; },
    });
  }

  /** a re-executed snippet's probe control: the request the live run queued, queued again */
  private requeue(s: Slot, op: ProbeControlOp): void {
    if (op === 'unregister') this.channel.unregister(s.id);
    else if (op === 'enable') this.channel.enable(s.id);
    else this.channel.disable(s.id);
  }

  /** runs a compiled part; a fault is one line (as a breakpoint condition's or log message's fault on the sample kernel; none when re-executed) */
  private run(h: CompiledHandler, what: string, s: Slot, env: AgentHandlerEnv, quiet = false): bigint | HandlerFault {
    try {
      return h.run(env);
    } catch (e) {
      const f = e instanceof HandlerFault ? e : new HandlerFault('memory', (e as Error).message, 1, 1);
      if (!quiet) this.onOutput?.(`breakpoint ${what} at ${s.symbol}+0x${s.offset.toString(16)} faulted: ${f.message} (at ${f.line}:${f.column})\n`);
      return f;
    }
  }

  /** the hit into the log; a kretprobe's entry only starts its latency (false: nothing more to do) */
  private logHit(s: Slot, h: AgentHit): boolean {
    const task = this.ctx.task();
    const pid = task?.pid ?? 0, now = Number(this.ctx.nowNs());
    const pos = this.ctx.position(), cpu = pos.cpu;
    const key = `${s.id}:${pid}`;
    let latency = NaN;
    if (s.req.ret && h.kind === 'entry') {
      const st = this.entries.get(key) ?? [];
      st.push(now);
      this.entries.set(key, st);
    } else if (s.req.ret) {
      const t0 = this.entries.get(key)?.pop();
      if (t0 !== undefined) latency = now - t0;
    }
    const kind = !s.req.ret ? 'kprobe' : h.kind === 'entry' ? 'kretprobe-entry' : 'kretprobe-return';
    const seq = this.hits.take(pos, 'agent')!;
    this.hitLog.hit(seq, pos.g, now, cpu, pid, task?.comm ?? '', kind, s.req.bpId, `${s.symbol}+0x${s.offset.toString(16)}`, s.at, latency);
    this.places.set(seq, { ...pos, stop: this.stopOf(s, h), stops: s.req.message === undefined });
    // as many places as the log keeps records
    if (this.places.size > this.hitLog.size) this.places.delete(this.places.keys().next().value!);
    return !(s.req.ret && h.kind === 'entry');
  }

  private stopOf(s: Slot, h: AgentHit): AgentStop {
    return { bpId: s.req.bpId, kind: h.kind, regs: h.regs, at: s.at, symbol: s.symbol, offset: s.offset, hits: s.hits };
  }

  /** a line a gutter probe printed at its hit: the Debug Console, and the hit's record */
  private print(text: string): void {
    const cpu = this.ctx.cpu();
    for (const line of text.split('\n')) if (line !== '') this.hitLog.output(cpu, line);
    this.onOutput?.(text);
  }

  private hit(h: AgentHit): void {
    // a new hit on a CPU: its handler passed agent_stop_point after the last one (kprobe handlers do not nest on a CPU)
    this.pendingStops.delete(this.ctx.cpu());
    const s = this.slots.get(h.id);
    if (!s || s.kprobe === undefined) return;
    if (this.ctx.replaying()) { this.rerun(s, h); return; }
    if (!this.logHit(s, h)) return;
    let env: AgentHandlerEnv | undefined;
    if (s.condition) {
      env = this.env(s, h);
      const c = this.run(s.condition, 'condition', s, env);
      // a faulting condition stops a stopping breakpoint (so the fault is seen), as on the sample kernel
      if (c === 0n || (c instanceof HandlerFault && s.req.message !== undefined)) return;
    }
    s.hits++;
    if (s.req.message === undefined) {
      this.pendingStops.set(this.ctx.cpu(), this.stopOf(s, h));
      return;
    }
    if (s.snippet) { this.run(s.snippet, 'log message', s, env ?? this.env(s, h)); return; }
    const msg = s.req.message;
    let text: string;
    try {
      text = this.format(msg, s, h);
    } catch (e) {
      text = `${msg} (the guest's pt_regs at 0x${h.regs.toString(16)} cannot be read: ${(e as Error).message})`;
    }
    this.print(`${text}\n`);
  }

  /**
   * A hit the machine re-executes (time travel): the condition and the
   * handler snippet run again against the same pt_regs, so what they wrote
   * into the guest is written again, but print nothing; the hit is not
   * counted or logged again; a stopping hit is pending for agent_stop_point
   * as it was live. A plain message only reads: nothing to do.
   */
  private rerun(s: Slot, h: AgentHit): void {
    if (s.req.ret && h.kind === 'entry') return;
    let env: AgentHandlerEnv | undefined;
    if (s.condition) {
      env = this.env(s, h, true);
      const c = this.run(s.condition, 'condition', s, env, true);
      if (c === 0n || (c instanceof HandlerFault && s.req.message !== undefined)) return;
    }
    if (s.req.message === undefined) { this.pendingStops.set(this.ctx.cpu(), this.stopOf(s, h)); return; }
    if (s.snippet) this.run(s.snippet, 'log message', s, env ?? this.env(s, h, true), true);
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

function firstError(d: readonly Diagnostic[]): string {
  const e = d.find(x => x.severity === 'error') ?? d[0];
  return e ? `${e.line}:${e.column}: ${e.message}` : 'does not compile';
}
