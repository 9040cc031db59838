/**
 * The arch-neutral kprobes core (Linux kernel/kprobes.c): probe table by
 * address, aggregate probes, registration rules, arming through textPoke,
 * the per-CPU control block and the handler invocation (pre/post/fault,
 * nmissed). The trap handlers (kprobe_int3_handler, kprobe_debug_handler /
 * post_kprobe_handler, kprobe_fault_handler) live in traps.ts,
 * kretprobes in kretprobes.ts, jprobes in jprobes.ts, kprobes on
 * ftrace call sites in ftrace.ts, the debugfs files in debugfs.ts, the
 * engine code's synthetic symbol names in symbolize.ts, the registration
 * input checks in validate.ts. Everything arch-specific goes through the hook table
 * (archHooks.ts) found by ArchOps.name.
 */
import type { Cpu, Trap } from '../arch/types';
import { Errno } from '../kernel/abi';
import type { KernelApi } from '../kernel/types';
import { MemoryFault } from '../memory/memory';
import { fromVAddr, hex, mustVAddr } from '../memory/address';
import { PERM_X } from '../memory/memory';
import { defaultArmKprobe, defaultDisarmKprobe, KprobesArchContext, KprobesArchHooks } from './archHooks';
import { kprobesArchFor } from './archRegistry';
import { KprobeEvents, ProbeInfo } from './events';
import { InsnSlots } from './insnSlots';
import {
  Jprobe, Kprobe, KprobeCtlblk, KprobeStatus, Kretprobe, KPROBE_FLAG_DISABLED, KPROBE_FLAG_FTRACE, KPROBE_FLAG_GONE, KPROBE_FLAG_OPTIMIZED,
  kprobeDisabled, newCtlblk, ProbeKind,
} from './kprobe';
import { PtRegs } from './ptRegs';
import { Jprobes } from './jprobes';
import { HandlerOops, JPROBE_RETURN, JprobeReturn } from './errors';
import { Kretprobes } from './kretprobes';
import { KernelData } from './kdata';
import { NestedCaller } from './nestedCall';
import { ExceptionTable } from './extable';
import { OPTIMIZE_DELAY_NS, OptimizationStatus, Optimizer } from './optprobes';
import { attachEngine } from './sysctl';
import { validateArray, validateKprobe } from './validate';
import { addrFailure, errnoOf, fieldFailure, KprobeRegError, KprobeRegResult, regFailed } from './regResult';
import { KprobesFtrace } from './ftrace';
import { KprobeTraps } from './traps';
import type { BreakpointSite, KprobesEngineOptions, KprobeStats } from './engineTypes';
import { probeName } from './symbolize';
import { EngineCodeRegistry, offsetFrom } from './codeRegistry';

export type { KprobesEngineOptions, KprobeStats, BreakpointSite };

export class KprobesEngine {
  readonly hooks: KprobesArchHooks;
  readonly ctx: KprobesArchContext;
  readonly events = new KprobeEvents();
  /** the engine's own code: slot pages, detour buffers, trampolines, stubs (codeRegistry.ts) */
  readonly code = new EngineCodeRegistry();
  readonly slots: InsnSlots;
  /** kprobe_table: address -> probe (or aggregate probe) */
  private readonly table = new Map<bigint, Kprobe>();
  /** aggregate probe -> its member list (Linux ap->list) */
  private readonly aggrList = new WeakMap<Kprobe, Kprobe[]>();
  /** registered user probes */
  private readonly registered = new Set<Kprobe>();
  /** registered probe -> its address at registration */
  private readonly regAddr = new WeakMap<Kprobe, bigint>();
  private readonly kinds = new WeakMap<Kprobe, ProbeKind>();
  /** addresses whose breakpoint is currently written */
  private readonly armed = new Set<bigint>();
  private readonly ctlblks: KprobeCtlblk[] = [];
  private readonly regsViews = new Map<Cpu, PtRegs>();
  /** the last view asked for per CPU id (a fast path of regsOf on every hit) */
  private readonly regsById: PtRegs[] = [];
  /** probes unregistered while a CPU still referenced their slot (freed later) */
  private pendingRemove: Kprobe[] = [];
  private nextId = 1;
  /** kprobes_all_disarmed (debugfs `enabled` = !this) */
  private allDisarmed = false;
  readonly kretprobes: Kretprobes;
  readonly jprobes: Jprobes;
  /** writable kernel data (kretprobe instance data) */
  readonly data: KernelData;
  private readonly nested: NestedCaller;
  /** the jump optimizer (optprobes.ts) */
  readonly optimizer: Optimizer;
  readonly exTable: ExceptionTable;
  readonly stats: KprobeStats = {
    int3Hits: 0, singleSteps: 0, boostedHits: 0, detourHits: 0, optCallbacks: 0, kretTrampolineTraps: 0, kretBoostCallbacks: 0,
    nativeOptFrames: 0, nativeKretFrames: 0, inlineOptEntries: 0, inlineKretEntries: 0,
    ftraceHits: 0, nativeFtraceFrames: 0, inlineFtraceEntries: 0,
  };
  /** kprobes on ftrace call sites (ftrace.ts) */
  readonly ftrace: KprobesFtrace;
  /** the trap handlers (traps.ts) @internal (optprobes.ts) */
  readonly traps: KprobeTraps;
  private kprobeBooster: boolean;

  constructor(readonly kernel: KernelApi, opts: KprobesEngineOptions = {}) {
    const hooks = opts.hooks ?? kprobesArchFor(kernel.arch.name);
    if (!hooks) throw new Error(`kprobes: no arch support for ${kernel.arch.name}`);
    this.hooks = hooks;
    this.slots = new InsnSlots(kernel, hooks.slotSize, this.code, {
      // a breakpoint in a slot page: the step breakpoint of arches without a trace flag
      breakpoint: (cpu, _regs, _kcb, addr) => this.traps.slotBreakpoint(cpu, addr),
      symbolize: (addr, page) => {
        const slot = this.slots.slotOf(page, addr);
        const p = this.probeBySlot(slot);
        return `${page.symbol}${p?.addr !== undefined ? `[${probeName(this, p.addr)}]` : ''}${offsetFrom(addr, slot)}`;
      },
    });
    this.exTable = new ExceptionTable(kernel.image);
    this.ctx = {
      kernel,
      arch: kernel.arch,
      slots: this.slots,
      readOriginal: (addr, len) => this.readTextWithoutProbes(kernel.mem, addr, len),
      searchExceptionTables: addr => this.exTable.search(addr),
      exceptionTable: () => this.exTable.entries,
    };
    this.data = new KernelData(kernel);
    this.nested = new NestedCaller(this);
    this.kretprobes = new Kretprobes(this, opts.kretprobeBooster ?? true);
    this.jprobes = new Jprobes(this);
    this.ftrace = new KprobesFtrace(this, opts.kprobesOnFtrace ?? true);
    this.optimizer = new Optimizer(this, hooks.optprobes, opts.optimizeDelayNs ?? OPTIMIZE_DELAY_NS);
    if (opts.optimization === false) this.optimizer.setEnabled(false);
    this.kprobeBooster = opts.kprobeBooster ?? true;
    this.traps = new KprobeTraps(this, this.nested);
    kernel.onTaskExit(t => this.kretprobes.flushTask(t));
    attachEngine(kernel, this);
  }

  // ------------------------------------------------- optimization, boosters

  /** sysctl debug.kprobes_optimization (true = 1) */
  get optimization(): boolean { return this.optimizer.enabled; }

  /** sysctl -w debug.kprobes_optimization=0|1: 0 unoptimizes every optimized probe and stops new optimizations */
  setOptimization(on: 0 | 1 | boolean): void { this.optimizer.setEnabled(on === true || on === 1); }

  /** wait_for_kprobe_optimizer(): write the jumps of every queued probe now */
  waitForOptimizer(): void { this.optimizer.waitForOptimizer(); }

  /** where an address stands with jump optimization (state, region, reason it is not optimized) */
  optimizationStatus(addr: bigint): OptimizationStatus { return this.optimizer.status(addr); }

  /** the jump is written at addr ([OPTIMIZED]) */
  isOptimized(addr: bigint): boolean { return this.optimizer.isOptimized(addr); }

  /** the kprobe booster switch (emulator knob; the overhead table's k vs b) */
  get kprobeBoosterEnabled(): boolean { return this.kprobeBooster; }
  setKprobeBooster(on: boolean): void { this.kprobeBooster = on; }

  /** the kretprobe booster switch (new instances use the booster trampoline); the overhead table's r vs rb */
  get kretprobeBoosterEnabled(): boolean { return this.kretprobes.boosted; }
  setKretprobeBooster(on: boolean): void { this.kretprobes.setBoost(on); }

  /** what kind of engine site raised a breakpoint trap at addr (the breakpoint's own address) */
  breakpointSite(addr: bigint): BreakpointSite {
    if (this.table.has(addr)) return 'kprobe';
    const code = this.code.find(addr);
    return code?.site?.(addr, code) ?? 'none';
  }

  // ---------------------------------------------------------------- helpers

  /** per-CPU kprobe_ctlblk */
  ctlblk(cpu: number): KprobeCtlblk {
    let k = this.ctlblks[cpu];
    if (!k) { k = newCtlblk(); this.ctlblks[cpu] = k; }
    return k;
  }

  regsOf(cpu: Cpu): PtRegs {
    const id = cpu.id;
    const byId = id >= 0 ? this.regsById[id] : undefined;
    if (byId !== undefined && byId.cpu === cpu) return byId;
    let r = this.regsViews.get(cpu);
    if (!r) { r = new PtRegs(cpu, this.kernel.arch); this.regsViews.set(cpu, r); }
    if (id >= 0) this.regsById[id] = r;
    return r;
  }

  /** get_kprobe(addr): the probe (or aggregate) at addr */
  getKprobe(addr: bigint): Kprobe | undefined { return this.table.get(addr); }

  isAggregate(p: Kprobe): boolean { return this.aggrList.has(p); }

  /** user probes at addr (members of an aggregate, or the probe itself) */
  probesAt(addr: bigint): readonly Kprobe[] {
    const p = this.table.get(addr);
    if (!p) return [];
    return this.aggrList.get(p) ?? [p];
  }

  isRegistered(p: Kprobe): boolean { return this.registered.has(p); }

  /** the address a registered probe was registered at (p.addr may have been changed by its owner since) */
  private addrOf(p: Kprobe): bigint {
    const a = this.regAddr.get(p) ?? (p.addr as bigint);
    p.addr = a; // a caller that changed p.addr after registration gets it back
    return a;
  }

  kindOf(p: Kprobe): ProbeKind { return this.kinds.get(p) ?? 'k'; }

  /** @internal kretprobes/jprobes mark their kprobe's kind */
  setKind(p: Kprobe, k: ProbeKind): void { this.kinds.set(p, k); }

  /** registered user probes, ascending by address then table order (debugfs list order) */
  listEntries(): { addr: bigint; probe: Kprobe; aggregate: Kprobe | null }[] {
    const out: { addr: bigint; probe: Kprobe; aggregate: Kprobe | null }[] = [];
    const addrs = [...this.table.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const a of addrs) {
      const p = this.table.get(a) as Kprobe;
      const list = this.aggrList.get(p);
      if (list) for (const kp of list) out.push({ addr: a, probe: kp, aggregate: p });
      else out.push({ addr: a, probe: p, aggregate: null });
    }
    return out;
  }

  /**
   * "symbol+0xoff" for an address (%pS): the engine's own code by its
   * registered name (codeRegistry.ts: kretprobe_trampoline+0x0, ...),
   * else kallsyms, else its hex value.
   */
  where(addr: bigint): string {
    const own = this.code.symbolize(addr);
    if (own !== undefined) return own;
    const r = this.kernel.image.symbols.resolve(addr);
    return r ? `${r.sym.name}+0x${r.offset.toString(16)}` : hex(addr);
  }

  /** the registered probe (table entry) whose instruction slot starts at `slot` */
  probeBySlot(slot: bigint): Kprobe | undefined {
    for (const p of this.table.values()) if (p.ainsn?.mode === 'slot' && p.ainsn.insn === slot) return p;
    return undefined;
  }

  /** the nested-call return stub (0n until the first callKernelFunction) */
  nestedReturnStub(): bigint { return this.nested.stub(); }

  info(p: Kprobe): ProbeInfo {
    const addr = p.addr ?? 0n;
    return {
      id: p.id ?? 0, kind: this.kindOf(p), addr, where: this.where(addr),
      disabled: kprobeDisabled(p), gone: ((p.flags ?? 0) & KPROBE_FLAG_GONE) !== 0,
      optimized: p.addr !== undefined && this.registered.has(p) && this.optimizer.isOptimized(p.addr),
      ftrace: ((p.flags ?? 0) & KPROBE_FLAG_FTRACE) !== 0,
    };
  }

  /** debugfs `enabled`: true unless every probe was disarmed by the knob */
  get enabled(): boolean { return !this.allDisarmed; }

  // ------------------------------------------------------ text and arming

  /**
   * Read code bytes as the debugger should show them: every armed probe's
   * original bytes put back (default), or the bytes really in memory
   * (patched = true: the breakpoints are visible).
   */
  readTextWithoutProbes(mem = this.kernel.mem, addr: bigint, len: number, opts: { patched?: boolean } = {}): Uint8Array {
    const out = mem.readBytes(mustVAddr(addr), len);
    if (opts.patched) return out;
    const end = addr + BigInt(len);
    for (const a of this.armed) {
      const p = this.table.get(a);
      if (!p?.opcode) continue;
      const oe = a + BigInt(p.opcode.length);
      if (oe <= addr || a >= end) continue;
      for (let i = 0; i < p.opcode.length; i++) {
        const at = a + BigInt(i);
        if (at >= addr && at < end) out[Number(at - addr)] = p.opcode[i];
      }
    }
    this.optimizer.overlay(out, addr, len);
    return out;
  }

  private armKprobe(ap: Kprobe): void {
    const a = ap.addr as bigint;
    if (this.armed.has(a)) return;
    if ((ap.flags ?? 0) & KPROBE_FLAG_FTRACE) this.ftrace.arm(ap);
    else (this.hooks.armKprobe ?? defaultArmKprobe)(this.ctx, ap);
    this.armed.add(a);
  }

  private disarmKprobe(ap: Kprobe): void {
    const a = ap.addr as bigint;
    if (!this.armed.has(a)) return;
    this.optimizer.unoptimizeAt(a); // __disarm_kprobe: unoptimize first
    if ((ap.flags ?? 0) & KPROBE_FLAG_FTRACE) this.ftrace.disarm(ap);
    else (this.hooks.disarmKprobe ?? defaultDisarmKprobe)(this.ctx, ap);
    this.armed.delete(a);
  }

  isArmed(addr: bigint): boolean { return this.armed.has(addr); }

  /** debugfs `enabled` knob: false disarms everything (probe states untouched), true re-arms all but [DISABLED] */
  setEnabled(on: boolean): void {
    if (on === !this.allDisarmed) return;
    if (on) {
      this.allDisarmed = false;
      for (const ap of this.table.values()) if (!kprobeDisabled(ap)) this.armKprobe(ap);
    } else {
      this.allDisarmed = true;
      for (const ap of this.table.values()) this.disarmKprobe(ap);
    }
    this.optimizer.reconsider();
    this.events.emit({ type: 'enabledChanged', enabled: on });
  }

  // ---------------------------------------------------------- registration

  /** kprobe_addr(): resolve symbol_name+offset or addr+offset; -EINVAL / -ENOENT */
  resolveAddr(p: Kprobe): bigint | number {
    const hasSym = p.symbol_name !== undefined && p.symbol_name !== '';
    const hasAddr = p.addr !== undefined && p.addr !== 0n;
    if (hasSym === hasAddr) return -Errno.EINVAL;
    let base: bigint;
    if (hasSym) {
      const s = this.kernel.image.symbols.lookup(p.symbol_name as string);
      if (!s) return -Errno.ENOENT;
      base = s.value;
    } else base = p.addr as bigint;
    return BigInt.asUintN(64, base + (p.offset ?? 0n));
  }

  /**
   * kprobe_addr() and the function-entry rule of kretprobes (arch_kprobe_on_func_entry)
   * and jprobes: the address, or the refusal. @internal (kretprobes.ts, jprobes.ts)
   */
  funcEntryAddr(p: Kprobe, kind: 'kretprobe' | 'jprobe', onEntry: (offset: bigint) => boolean): bigint | KprobeRegError {
    const addr = this.resolveAddr(p);
    if (typeof addr === 'number') return addrFailure(p, addr);
    const at = this.kernel.image.symbols.resolve(addr);
    if (!at || !onEntry(at.offset)) return regFailed(-Errno.EINVAL, `a ${kind} must be placed at a function entry, not ${this.symbolic(addr)}`);
    return addr;
  }

  /** within_kprobe_blacklist(): arch hook, then the image's NOKPROBE_SYMBOL list */
  withinKprobeBlacklist(addr: bigint): boolean {
    if (this.hooks.withinKprobeBlacklist?.(this.ctx, addr)) return true;
    for (const b of this.kernel.blacklist()) if (addr >= b.start && addr < b.end) return true;
    return false;
  }

  /** kernel_text_address(): inside an executable segment of the image */
  private kernelTextAddress(addr: bigint): boolean {
    for (const s of this.kernel.image.segments) {
      if (s.type === 1 && (s.flags & 1) && addr >= s.vaddr && addr < s.vaddr + s.memsz) return true;
    }
    const v = mustVAddrOrNull(addr);
    if (v === null) return false;
    const r = this.kernel.mem.regionAt(v);
    return !!r && (r.perms & PERM_X) !== 0 && !this.code.owns(addr);
  }

  /** check_kprobe_address_safe() */
  private checkAddressSafe(addr: bigint): KprobeRegResult {
    const own = this.code.symbolize(addr);
    if (own !== undefined) return regFailed(-Errno.EINVAL, `${hex(addr)} is inside the kprobes code ${own}`);
    if (!this.kernelTextAddress(addr)) return regFailed(-Errno.EINVAL, `${this.symbolic(addr)} is not in kernel text`);
    if (this.withinKprobeBlacklist(addr)) return regFailed(-Errno.EINVAL, 'address is inside the kprobe blacklist');
    return 0;
  }

  /** addr as symbol+0xoff (or hex) for a refusal's reason */
  private symbolic(addr: bigint): string { return this.kernel.image.symbols.format(addr, false); }

  /** why arch_prepare_kprobe (or the ftrace preparation) refused the probe at addr with `errno` */
  private prepareFailure(addr: bigint, errno: number, ftrace: boolean): KprobeRegError {
    const where = this.symbolic(addr);
    if (errno === -Errno.ENOMEM) return regFailed(errno, 'no room left for an instruction slot');
    if (ftrace) return regFailed(errno, `the ftrace trampoline is out of reach of the call site at ${where}`);
    if (errno === -Errno.EILSEQ) return regFailed(errno, `${where} is not at an instruction boundary`);
    let insn = null;
    try { insn = this.kernel.arch.decode(this.kernel.mem, addr); } catch { insn = null; }
    if (!insn) return regFailed(errno, `the instruction at ${where} does not decode`);
    if (this.hooks.decodeProbeInsn(this.ctx, addr, insn) === 'reject') return regFailed(errno, `'${insn.mnemonic}' at ${where} cannot be probed`);
    return regFailed(errno, `${where} cannot be probed`);
  }

  /** register_kprobe(): 0 or -errno */
  registerKprobe(p: Kprobe): number {
    return errnoOf(this.registerKprobeResult(p));
  }

  /** register_kprobe() with the reason of a refusal (the debugger's message) */
  registerKprobeResult(p: Kprobe): KprobeRegResult {
    const v = validateKprobe(p);
    if (v) return fieldFailure(v, 'struct kprobe');
    if (this.registered.has(p)) return regFailed(-Errno.EINVAL, 'the probe is already registered'); // check_kprobe_rereg
    const addr = this.resolveAddr(p);
    if (typeof addr === 'number') return addrFailure(p, addr);
    p.addr = addr;
    // check_ftrace_location(): an ftrace call site is probed at its first byte only
    const site = this.ftrace.location(addr);
    if (site !== undefined && site !== addr) return regFailed(-Errno.EILSEQ, `${this.symbolic(addr)} is not at an instruction boundary`);
    const safe = this.checkAddressSafe(addr);
    if (safe) return safe;
    p.flags = ((p.flags ?? 0) & KPROBE_FLAG_DISABLED) | (site !== undefined ? KPROBE_FLAG_FTRACE : 0);
    p.nmissed = 0;
    p.hits = 0;
    const old = this.table.get(addr);
    if (old) {
      const r = this.registerAggrKprobe(old, p);
      if (r) return regFailed(r, `another jprobe is already registered at ${this.symbolic(addr)}`);
    } else {
      // a breakpoint inside an optimized probe's jump: that probe falls back to its breakpoint first
      this.optimizer.unoptimizeCovering(addr);
      let r: number;
      try {
        r = site !== undefined ? this.ftrace.prepare(p) : this.hooks.prepareKprobe(this.ctx, p);
      } catch (e) {
        if (!(e instanceof RangeError)) throw e;
        r = -Errno.ENOMEM; // no room left for an instruction slot (exec area exhausted)
      }
      if (r) { this.optimizer.reconsider(); return this.prepareFailure(addr, r, site !== undefined); }
      this.table.set(addr, p);
      if (!this.allDisarmed && !kprobeDisabled(p)) this.armKprobe(p);
    }
    p.id = this.nextId++;
    this.registered.add(p);
    this.regAddr.set(p, addr);
    this.events.emit({ type: 'registered', probe: this.info(p) });
    if (!old) {
      if (site !== undefined) this.optimizer.refuse(addr, 'an ftrace-based probe ([FTRACE]) is not optimized');
      else this.optimizer.prepare(addr);
    }
    this.optimizer.reconsider();
    return 0;
  }

  /** register_aggr_kprobe(): a second probe at an address */
  private registerAggrKprobe(orig: Kprobe, p: Kprobe): number {
    let ap = orig;
    let list = this.aggrList.get(orig);
    if (!list) {
      // init_aggr_kprobe: ap takes orig's place in the table
      ap = {
        addr: orig.addr, flags: orig.flags ?? 0, nmissed: 0, hits: 0, opcode: orig.opcode, ainsn: orig.ainsn,
        pre_handler: (_kp, regs) => this.aggrPreHandler(ap, regs),
        post_handler: (_kp, regs, fl) => this.aggrPostHandler(ap, regs, fl),
        fault_handler: (_kp, regs, trapnr) => this.aggrFaultHandler(regs, trapnr),
      };
      list = [orig];
      orig.flags = (orig.flags ?? 0) & ~KPROBE_FLAG_OPTIMIZED; // the aggregate carries [OPTIMIZED]
      this.aggrList.set(ap, list);
      this.table.set(orig.addr as bigint, ap);
    }
    // add_new_kprobe: at most one jprobe, kept last; others go first (list_add_rcu)
    if (this.kindOf(p) === 'j') {
      if (list.some(k => this.kindOf(k) === 'j')) return -Errno.EEXIST;
      list.push(p);
    } else list.unshift(p);
    p.opcode = ap.opcode;
    p.ainsn = ap.ainsn;
    if (kprobeDisabled(ap) && !kprobeDisabled(p)) {
      ap.flags = (ap.flags ?? 0) & ~KPROBE_FLAG_DISABLED;
      if (!this.allDisarmed) this.armKprobe(ap);
    }
    return 0;
  }

  /** register_kprobes(): all or nothing */
  registerKprobes(kps: Kprobe[]): number {
    if (!validateArray(kps)) return -Errno.EINVAL;
    for (let i = 0; i < kps.length; i++) {
      const r = this.registerKprobe(kps[i]);
      if (r < 0) {
        if (i > 0) this.unregisterKprobes(kps.slice(0, i));
        return r;
      }
    }
    return 0;
  }

  /** unregister_kprobe(); an unregistered probe gets its addr cleared (as Linux does) */
  unregisterKprobe(p: Kprobe): void {
    this.unregisterKprobes([p]);
  }

  unregisterKprobes(kps: Kprobe[]): void {
    if (!Array.isArray(kps)) return;
    for (const p of kps) {
      if (typeof p !== 'object' || p === null) continue;
      if (this.unregisterKprobeTop(p) < 0) p.addr = undefined;
    }
    this.optimizer.reconsider();
    this.collectGarbage();
  }

  /** __unregister_kprobe_top + bottom */
  private unregisterKprobeTop(p: Kprobe): number {
    if (!this.registered.has(p)) return -Errno.EINVAL;
    const addr = this.addrOf(p);
    const ap = this.table.get(addr) as Kprobe;
    const list = this.aggrList.get(ap);
    if (!list) {
      this.disarmKprobe(ap);
      this.table.delete(addr);
      this.optimizer.release(addr);
      this.removeKprobe(ap);
    } else {
      list.splice(list.indexOf(p), 1);
      if (list.length === 0) {
        this.disarmKprobe(ap);
        this.table.delete(addr);
        this.optimizer.release(addr);
        this.removeKprobe(ap);
      } else if (list.every(k => kprobeDisabled(k))) {
        ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_DISABLED;
        this.disarmKprobe(ap);
      }
    }
    this.registered.delete(p);
    this.regAddr.delete(p);
    p.flags = (p.flags ?? 0) & ~KPROBE_FLAG_OPTIMIZED;
    this.events.emit({ type: 'unregistered', probe: this.info(p) });
    return 0;
  }

  /** arch_remove_kprobe, deferred while a CPU is still inside the probe */
  private removeKprobe(ap: Kprobe): void {
    if ((ap.flags ?? 0) & KPROBE_FLAG_FTRACE) return; // no instruction slot
    if (this.inUse(ap)) this.pendingRemove.push(ap);
    else this.hooks.removeKprobe(this.ctx, ap);
  }

  private inUse(ap: Kprobe): boolean {
    const members = this.aggrList.get(ap) ?? [];
    for (const k of this.ctlblks) {
      if (!k) continue;
      for (const q of [k.current, k.prev.kp]) if (q && (q === ap || members.includes(q) || q.ainsn === ap.ainsn)) return true;
    }
    return false;
  }

  /** free the slots of probes removed while in use, once no CPU is inside them @internal (traps.ts) */
  collectGarbage(): void {
    if (this.pendingRemove.length === 0) return;
    const still: Kprobe[] = [];
    for (const ap of this.pendingRemove) {
      if (this.inUse(ap)) still.push(ap);
      else this.hooks.removeKprobe(this.ctx, ap);
    }
    this.pendingRemove = still;
  }

  /** disable_kprobe(): 0 or -EINVAL */
  disableKprobe(p: Kprobe): number {
    if (!this.registered.has(p)) return -Errno.EINVAL;
    if (kprobeDisabled(p)) return 0;
    p.flags = (p.flags ?? 0) | KPROBE_FLAG_DISABLED;
    const ap = this.table.get(this.addrOf(p)) as Kprobe;
    const list = this.aggrList.get(ap);
    if (list && list.every(k => kprobeDisabled(k))) ap.flags = (ap.flags ?? 0) | KPROBE_FLAG_DISABLED;
    if (kprobeDisabled(ap)) this.disarmKprobe(ap);
    this.optimizer.reconsider();
    this.events.emit({ type: 'stateChanged', probe: this.info(p) });
    return 0;
  }

  /** enable_kprobe(): 0 or -EINVAL */
  enableKprobe(p: Kprobe): number {
    if (!this.registered.has(p)) return -Errno.EINVAL;
    if ((p.flags ?? 0) & KPROBE_FLAG_GONE) return -Errno.EINVAL;
    if (!kprobeDisabled(p)) return 0;
    p.flags = (p.flags ?? 0) & ~KPROBE_FLAG_DISABLED;
    const ap = this.table.get(this.addrOf(p)) as Kprobe;
    ap.flags = (ap.flags ?? 0) & ~KPROBE_FLAG_DISABLED;
    if (!this.allDisarmed) this.armKprobe(ap);
    this.optimizer.reconsider();
    this.events.emit({ type: 'stateChanged', probe: this.info(p) });
    return 0;
  }

  // kretprobes / jprobes (Linux API names)
  registerKretprobe(rp: Kretprobe): number { return errnoOf(this.kretprobes.register(rp)); }
  /** register_kretprobe() with the reason of a refusal */
  registerKretprobeResult(rp: Kretprobe): KprobeRegResult { return this.kretprobes.register(rp); }
  /** the registered kretprobe whose entry kprobe is kp (Linux: container_of(p, struct kretprobe, kp)) */
  kretprobeOf(kp: Kprobe): Kretprobe | undefined { return this.kretprobes.of(kp); }
  unregisterKretprobe(rp: Kretprobe): void { this.kretprobes.unregisterMany([rp]); }
  registerKretprobes(rps: Kretprobe[]): number { return this.kretprobes.registerMany(rps); }
  unregisterKretprobes(rps: Kretprobe[]): void { this.kretprobes.unregisterMany(rps); }
  enableKretprobe(rp: Kretprobe): number { return this.enableKprobe(rp.kp); }
  disableKretprobe(rp: Kretprobe): number { return this.disableKprobe(rp.kp); }
  registerJprobe(jp: Jprobe): number { return errnoOf(this.jprobes.register(jp)); }
  /** register_jprobe() with the reason of a refusal */
  registerJprobeResult(jp: Jprobe): KprobeRegResult { return this.jprobes.register(jp); }
  unregisterJprobe(jp: Jprobe): void { this.jprobes.unregisterMany([jp]); }
  registerJprobes(jps: Jprobe[]): number { return this.jprobes.registerMany(jps); }
  unregisterJprobes(jps: Jprobe[]): void { this.jprobes.unregisterMany(jps); }
  enableJprobe(jp: Jprobe): number { return this.enableKprobe(jp.kp); }
  disableJprobe(jp: Jprobe): number { return this.disableKprobe(jp.kp); }
  /**
   * jprobe_return(): ends the running jprobe handler (it never returns: it
   * throws, ~0.5 us of host time per call; an entry handler that simply
   * returns ends the same way and costs nothing).
   */
  jprobeReturn(): never { throw JPROBE_RETURN; }

  /**
   * Call a kernel function from a handler on the CPU that hit the probe
   * (probes hit inside are reentries: nmissed). Returns the return register.
   */
  callKernelFunction(cpu: Cpu, fn: bigint, args: readonly bigint[] = []): bigint {
    return this.nested.call(cpu, fn, args);
  }

  /** the kretprobe trampoline address new instances return to (the booster's when it is on) */
  get kretprobeTrampoline(): bigint { return this.kretprobes.trampoline; }

  // ------------------------------------------------------ aggregate handlers

  /** aggr_pre_handler: every enabled member in list order; a non-zero return stops there */
  private aggrPreHandler(ap: Kprobe, regs: PtRegs): number {
    const kcb = this.ctlblk(regs.cpu.id);
    for (const kp of (this.aggrList.get(ap) ?? []).slice()) {
      if (kprobeDisabled(kp)) continue;
      kp.hits = (kp.hits ?? 0) + 1;
      if (this.events.active) this.emitHit(kp, regs.cpu.id);
      if (kp.pre_handler) {
        kcb.instance = kp;
        const r = this.guardedPre(kp, kp.pre_handler, regs);
        kcb.instance = null;
        if (r) return 1;
      }
    }
    return 0;
  }

  private aggrPostHandler(ap: Kprobe, regs: PtRegs, flags: number): void {
    const kcb = this.ctlblk(regs.cpu.id);
    for (const kp of (this.aggrList.get(ap) ?? []).slice()) {
      if (kprobeDisabled(kp) || !kp.post_handler) continue;
      kcb.instance = kp;
      const post = kp.post_handler;
      this.guarded(kp, regs, () => post(kp, regs, flags), undefined);
      kcb.instance = null;
    }
  }

  /** aggr_fault_handler: only the member whose handler is running */
  private aggrFaultHandler(regs: PtRegs, trapnr: number): number {
    const cur = this.ctlblk(regs.cpu.id).instance;
    if (cur?.fault_handler) return cur.fault_handler(cur, regs, trapnr);
    return 0;
  }

  /** the probe (or an enabled aggregate member) has a post_handler @internal (traps.ts) */
  hasAnyPost(p: Kprobe): boolean {
    const list = this.aggrList.get(p);
    return list ? list.some(k => !kprobeDisabled(k) && !!k.post_handler) : !!p.post_handler;
  }

  private emitHit(p: Kprobe, cpu: number): void {
    this.events.emit({ type: 'hit', id: p.id ?? 0, addr: p.addr ?? 0n, cpu, kind: this.kindOf(p) });
  }

  /** kprobes_inc_nmissed_count() */
  incNmissed(p: Kprobe, cpu: number): void {
    const list = this.aggrList.get(p);
    for (const k of list ?? [p]) {
      k.nmissed = (k.nmissed ?? 0) + 1;
      if (this.events.active) this.events.emit({ type: 'missed', id: k.id ?? 0, addr: k.addr ?? 0n, cpu });
    }
  }

  /**
   * Run a handler of probe `who`. A MemoryFault thrown by the handler (an
   * access to emulated memory that faulted) is a fault in the handler: nmissed
   * counts it and who.fault_handler may handle it (the handler is then treated
   * as having returned `fallback`); otherwise the CPU oopses.
   */
  guarded<T>(who: Kprobe, regs: PtRegs, fn: () => T, fallback: T): T {
    try {
      return fn();
    } catch (e) {
      this.handlerFailed(who, regs, e);
      return fallback;
    }
  }

  /** guarded() for a pre_handler, without a closure per hit (the hot path of every probe hit) */
  private guardedPre(p: Kprobe, pre: NonNullable<Kprobe['pre_handler']>, regs: PtRegs): number {
    try {
      return pre(p, regs);
    } catch (e) {
      this.handlerFailed(p, regs, e);
      return 0;
    }
  }

  /**
   * A handler of `who` threw `e`: returns when its fault_handler handled a
   * MemoryFault (the caller goes on with its fallback value); otherwise
   * oopses the CPU and throws HandlerOops (control-flow signals rethrown).
   * @internal (jprobes.ts)
   */
  handlerFailed(who: Kprobe, regs: PtRegs, e: unknown): void {
    if (e instanceof HandlerOops || (e instanceof JprobeReturn && this.jprobes.depth > 0)) throw e;
    if (e instanceof JprobeReturn) {
      const msg = `jprobe_return() called outside a jprobe handler (${this.where(who.addr ?? 0n)})`;
      this.kernel.oops(regs.cpu, null, msg);
      throw new HandlerOops(msg);
    }
    const cpu = regs.cpu;
    const where = this.where(who.addr ?? 0n);
    if (e instanceof MemoryFault) {
      who.nmissed = (who.nmissed ?? 0) + 1;
      const trapnr = this.kernel.arch.abi.trapNumbers.pageFault ?? 14;
      let handled = 0;
      if (who.fault_handler) {
        try { handled = who.fault_handler(who, regs, trapnr); } catch { handled = 0; }
      }
      if (handled) return;
      const trap: Trap = {
        kind: 'pageFault', pc: cpu.getPc(), addr: e.address, access: e.access, present: e.present, user: false,
      };
      const msg = `BUG: unable to handle page fault for address: ${hex(fromVAddr(e.addr))} in a kprobe handler (${where})`;
      this.kernel.oops(cpu, trap, msg);
      throw new HandlerOops(msg);
    }
    const msg = `kprobe handler (${where}) failed: ${e instanceof Error ? e.message : String(e)}`;
    this.kernel.oops(cpu, null, msg);
    throw new HandlerOops(msg);
  }

  /**
   * A hit's pre_handler path: the hit counted (aggregates count their
   * members), the event, the guarded handler. Throws HandlerOops when the
   * CPU oopsed. @internal (ftrace.ts)
   */
  preHandlerHit(p: Kprobe, regs: PtRegs): number {
    const aggr = this.aggrList.has(p);
    if (!aggr) {
      p.hits = (p.hits ?? 0) + 1;
      if (this.events.active) this.emitHit(p, regs.cpu.id);
    }
    const pre = p.pre_handler;
    if (!pre) return 0;
    return aggr ? pre(p, regs) : this.guardedPre(p, pre, regs);
  }

  /**
   * After the (real or emulated) single-step: HIT_SSDONE and the
   * post_handler(s), when the probe has any. A handler that oopsed the CPU
   * ends here. @internal (ftrace.ts)
   */
  postHandlerHit(cur: Kprobe, regs: PtRegs, kcb: KprobeCtlblk): void {
    if (!this.hasAnyPost(cur)) return;
    kcb.status = KprobeStatus.HIT_SSDONE;
    const post = cur.post_handler as NonNullable<Kprobe['post_handler']>;
    try {
      if (this.aggrList.has(cur)) post(cur, regs, 0);
      else {
        // guarded() without a closure per hit
        try { post(cur, regs, 0); } catch (e) { this.handlerFailed(cur, regs, e); }
      }
    } catch (e) {
      if (!(e instanceof HandlerOops)) throw e;
    }
  }

  /** the control block back to idle @internal (ftrace.ts) */
  resetCurrent(kcb: KprobeCtlblk): void {
    kcb.current = null;
    kcb.status = KprobeStatus.NONE;
    kcb.instance = null;
  }
}

function mustVAddrOrNull(a: bigint): number | null {
  try { return mustVAddr(a); } catch { return null; }
}
