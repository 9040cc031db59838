/**
 * The kprobes API for C modules written as for Linux: register_kprobe(),
 * unregister_kprobe(), enable_/disable_kprobe(), register_/
 * unregister_kretprobe(), the plural register_/unregister_kprobes() and
 * _kretprobes(), jprobes, dump_stack() and kallsyms_lookup_name() as
 * kernel functions a module calls, with what a kprobes self-test needs
 * around them (Linux's own lib/test_kprobes.c, a KUnit suite, runs on
 * these: test/modules/linuxTestKprobes.test.ts): stack_trace_save() /
 * stack_trace_print(), preempt_count() and arch_irqs_disabled() (what
 * preemptible() reads), raw_smp_processor_id(), get_current(),
 * get_random_u32() / _u64() / _bytes(). Each is a stub of engine code (one
 * breakpoint, named after the function in stack traces) that the module
 * loader resolves the module's undefined symbol to; its breakpoint does the
 * call: the arguments from the argument registers, the work here, the
 * result in the return register, and the return to the caller.
 *
 * The structures are read from guest memory with the layouts of
 * examples/include/linux/kprobes.h (LAYOUT below must match it). A
 * registered C probe is a struct kprobe of the engine whose handlers call
 * the module's C functions on the probed CPU (the engine's nested call)
 * with a struct pt_regs frame in guest memory: the registers written there
 * before the call and read back after (a handler's change of regs->ip is
 * the probed context's, as in Linux). struct kprobe's nmissed and flags
 * follow the engine's after every hit.
 *
 * Offered on the ports whose info part lays out struct pt_regs (ArchInfo.ptRegsFrame).
 */
import type { Cpu, PtRegsSlot } from '../arch/types';
import { errnoOf } from './regResult';
import type { KprobesEngine } from './core';
import type { Jprobe, Kprobe, Kretprobe, KretprobeInstance } from './kprobe';
import type { PtRegs } from './ptRegs';
import { mustVAddr } from '../memory/address';
import { fixupStackTrace } from './debugfs';
import { publishTaskStruct } from '../kernel/task';
import { kernelVsprintfEnv, PrintkLog, readCBytes, VaArgs, vsprintf } from '../kernel/printk';
import { dumpStackLines, emulatorCodeAt } from '../kernel/stack';
import { KprobeStatus } from './kprobe';
import { HandlerOnCpu } from './handlerOnCpu';
import { HandlerContexts } from './handlerStack';
import type { HandlerStackEngine, HandlerStackFrame } from './handlerStack';

/** field offsets of examples/include/linux/kprobes.h (LP64) */
export const LAYOUT = {
  kprobe: { nmissed: 32, addr: 40, symbol_name: 48, offset: 56, pre_handler: 64, post_handler: 72, fault_handler: 80, flags: 92, size: 96 },
  kretprobe: { handler: 96, entry_handler: 104, maxactive: 112, nmissed: 116, data_size: 120, size: 128 },
  kretprobe_instance: { rp: 0, ret_addr: 8, task: 16, data: 24, size: 32 },
  jprobe: { entry: 96, size: 104 },
} as const;

export const C_API_FUNCTIONS = [
  'register_kprobe', 'unregister_kprobe', 'enable_kprobe', 'disable_kprobe',
  'register_kprobes', 'unregister_kprobes',
  'register_kretprobe', 'unregister_kretprobe', 'register_kretprobes', 'unregister_kretprobes',
  'register_jprobe', 'unregister_jprobe', 'jprobe_return',
  'dump_stack', 'kallsyms_lookup_name',
  'stack_trace_save', 'stack_trace_print',
  'preempt_count', 'arch_irqs_disabled', 'raw_smp_processor_id', 'get_current',
  'get_random_u32', 'get_random_u64', 'get_random_bytes',
  'register_kwatch', 'unregister_kwatch',
  '_printk', 'ktime_get',
] as const;

/** the longest printk format read (Linux's record text is at most 1024 bytes) */
const PRINTK_FMT_MAX = 1024;

/**
 * struct kwatch as examples/include/linux/kprobes.h lays it out (the kwatch
 * interface text gives only register_kwatch / unregister_kwatch; the handler
 * type and this struct are this project's reconstruction of the 2.6-era
 * patch): addr 0, length 8, type 9, debugreg 12, handler 16, access_addr 24,
 * access 32 (HW_BREAKPOINT_R 1 / W 2 / X 4); 40 bytes.
 */
const KWATCH = { addr: 0, length: 8, type: 9, debugreg: 12, handler: 16, accessAddr: 24, access: 32, size: 40 } as const;
const ACCESS_BITS = { read: 1, write: 2, exec: 4 } as const;

/** what the C API needs of the machine's kernel watchpoints (machine.kwatch; absent: no kernel image) */
export interface KwatchProvider {
  register_kwatch(addr: bigint, length: number, type: number, handler: (ctx: { hit: { regs: PtRegs }; debugreg: number; addr: bigint; access: 'read' | 'write' | 'exec' }) => void): number;
  unregister_kwatch(debugreg: number): void;
}

interface CProbe { kp: Kprobe; rp?: Kretprobe; jp?: Jprobe; guest: bigint; handlers: bigint[] }


const EINVAL = -22;

export class KprobesCApi {
  private readonly stubs = new Map<string, bigint>();
  /** guest struct kprobe / kretprobe address -> the engine's probe */
  private readonly probes = new Map<bigint, CProbe>();
  private frames: bigint[] = [];

  /** the machine's kernel watchpoints (set by the machine: register_kwatch from C) */
  kwatch?: () => KwatchProvider;
  /** struct kwatch of each debug register a module's register_kwatch holds */
  private readonly kwatches = new Map<number, bigint>();

  /** C pre_handlers run as ordinary code on the CPU (the debugger has a breakpoint in them) */
  readonly onCpu: HandlerOnCpu;

  constructor(private readonly engine: KprobesEngine,
    /** the probed address an instruction slot's address executes out of line (undefined: not a probe's slot) */
    private readonly probedAddressOfSlot: (addr: bigint) => bigint | undefined = () => undefined) {
    this.onCpu = new HandlerOnCpu(engine, (cpu, frame, guest) => this.handlerReturned(cpu, frame, guest));
  }

  /** the arch's struct pt_regs, slot by slot (only called where supported) */
  private get ptRegsFrame(): readonly PtRegsSlot[] { return this.engine.kernel.arch.ptRegsFrame as readonly PtRegsSlot[]; }

  /** whether the arch's pt_regs frame is described (the API is offered) */
  get supported(): boolean { return this.engine.kernel.arch.ptRegsFrame !== undefined; }

  /** the address of an API function, its stub made on first use; undefined for other names */
  symbol(name: string): bigint | undefined {
    if (!this.supported || !(C_API_FUNCTIONS as readonly string[]).includes(name)) return undefined;
    let a = this.stubs.get(name);
    if (a !== undefined) return a;
    const bp = this.engine.kernel.arch.breakpointInsn;
    a = this.engine.slots.allocCode(bp.length, name, {
      breakpoint: (cpu, regs, _kcb, addr) => addr === a && this.call(name, cpu, regs),
    });
    this.engine.slots.write(a, bp);
    this.stubs.set(name, a);
    return a;
  }

  private call(name: string, cpu: Cpu, regs: PtRegs): boolean {
    const arg = (i: number): bigint => regs.arg(i);
    let ret = 0n;
    switch (name) {
      case 'register_kprobe': ret = BigInt(this.registerKprobe(arg(0))); break;
      case 'unregister_kprobe': this.unregister(arg(0)); break;
      case 'enable_kprobe': case 'disable_kprobe': {
        const c = this.probes.get(arg(0));
        ret = c ? BigInt(name === 'enable_kprobe' ? this.engine.enableKprobe(c.kp) : this.engine.disableKprobe(c.kp)) : -22n;
        break;
      }
      case 'register_kprobes': ret = BigInt(this.registerMany(arg(0), arg(1), g => this.registerKprobe(g))); break;
      case 'unregister_kprobes': case 'unregister_kretprobes': this.unregisterMany(arg(0), arg(1)); break;
      case 'register_kretprobe': ret = BigInt(this.registerKretprobe(arg(0))); break;
      case 'register_kretprobes': ret = BigInt(this.registerMany(arg(0), arg(1), g => this.registerKretprobe(g))); break;
      case 'unregister_kretprobe': case 'unregister_jprobe': this.unregister(arg(0)); break;
      case 'register_jprobe': ret = BigInt(this.registerJprobe(arg(0))); break;
      // the entry's remaining code returns to the engine's nested call, which restores the probed context
      case 'jprobe_return': break;
      case 'register_kwatch': ret = BigInt(this.registerKwatch(arg(0), Number(arg(1) & 0xffn), Number(arg(2) & 0xffn), arg(3))); break;
      case 'unregister_kwatch': {
        const reg = Number(BigInt.asIntN(32, arg(0)));
        if (this.kwatches.delete(reg)) this.kwatch?.().unregister_kwatch(reg);
        break;
      }
      case 'dump_stack': {
        // the caller's frame first: the stub's return address is in the module function that called it
        const lines = dumpStackLines(this.engine.kernel, cpu);
        this.engine.kernel.printk(cpu.id, lines.join('\n'), 'kernel');
        break;
      }
      case 'kallsyms_lookup_name': ret = this.lookupName(this.cString(arg(0))) ?? 0n; break;
      case 'stack_trace_save': ret = BigInt(this.stackTraceSave(cpu, regs, arg(0), Number(BigInt.asUintN(32, arg(1))), Number(BigInt.asUintN(32, arg(2))))); break;
      case 'stack_trace_print': this.stackTracePrint(cpu, arg(0), Number(BigInt.asUintN(32, arg(1))), Number(BigInt.asIntN(32, arg(2)))); break;
      case 'preempt_count': ret = BigInt(this.contexts.depthOf(cpu.id)); break;
      case 'arch_irqs_disabled': ret = this.engine.percpu.ctlblk(cpu.id).status !== KprobeStatus.NONE ? 1n : 0n; break;
      case 'raw_smp_processor_id': ret = BigInt(cpu.id); break;
      case 'get_current': ret = publishTaskStruct(this.engine.kernel.mem, this.engine.kernel.current(cpu.id)); break;
      case '_printk': ret = BigInt(this.printk(cpu, regs)); break;
      case 'ktime_get': ret = this.nowNs(cpu.id); break;
      case 'get_random_u32': ret = this.random() >> 32n; break;
      case 'get_random_u64': ret = this.random(); break;
      case 'get_random_bytes': this.randomBytes(arg(0), Number(BigInt.asUintN(32, arg(1)))); break;
    }
    regs.returnValue = BigInt.asUintN(64, ret);
    this.returnToCaller(regs);
    return true;
  }

  /** the stub's `ret`: to the return address the call left (stack or link register) */
  private returnToCaller(regs: PtRegs): void {
    const ra = this.engine.kernel.arch.abi.returnAddress;
    if (ra.kind === 'stack') {
      const slot = regs.sp + BigInt(ra.offset);
      regs.ip = regs.cpu.mem.read64(mustVAddr(slot));
      regs.sp = slot + 8n;
    } else {
      regs.ip = regs.cpu.getReg(ra.reg);
    }
  }

  private mem() { return this.engine.kernel.mem; }
  private r64(a: bigint): bigint { return BigInt.asUintN(64, this.mem().read64(mustVAddr(a))); }
  private r32(a: bigint): number { return this.mem().read32(mustVAddr(a)) >>> 0; }
  private w64(a: bigint, v: bigint): void { this.mem().write64(mustVAddr(a), BigInt.asUintN(64, v)); }
  private w32(a: bigint, v: number): void { this.mem().write32(mustVAddr(a), v >>> 0); }
  private cString(a: bigint): string { return a === 0n ? '' : this.mem().readCString(mustVAddr(a), 512); }

  /** a struct kprobe of the engine from the guest's, its handlers calling the module's C functions */
  private kprobeFrom(g: bigint): Kprobe {
    const L = LAYOUT.kprobe;
    const addr = this.r64(g + BigInt(L.addr));
    const symPtr = this.r64(g + BigInt(L.symbol_name));
    const kp: Kprobe = { flags: this.r32(g + BigInt(L.flags)) };
    if (addr !== 0n) kp.addr = addr;
    if (symPtr !== 0n) kp.symbol_name = this.cString(symPtr);
    // "module:symbol" (Linux's kallsyms_lookup_name looks in that module only): resolved here, the engine gets the
    // address; one that names nothing stays a name the engine cannot resolve (-ENOENT)
    if (addr === 0n && kp.symbol_name?.includes(':')) {
      const a = this.lookupName(kp.symbol_name);
      if (a !== undefined) { kp.addr = a; delete kp.symbol_name; }
    }
    kp.offset = BigInt(this.r32(g + BigInt(L.offset)));
    const pre = this.r64(g + BigInt(L.pre_handler)), post = this.r64(g + BigInt(L.post_handler)), fault = this.r64(g + BigInt(L.fault_handler));
    // a pre handler's context is the probed instruction; a post / fault handler's is where the CPU stands
    if (pre) {
      kp.pre_handler = (_p, regs) => {
        if (this.engine.onCpu.runHandlerOnCpu?.(pre) && this.onCpu.canDefer(regs.cpu)) { this.deferHandler(regs, pre, g, kp.addr ?? regs.ip); return 0; }
        return Number(BigInt.asIntN(32, this.callWithRegs(regs, pre, [g], kp, g, [], kp.addr)));
      };
    }
    if (post) {
      kp.post_handler = (_p, regs, flags) => {
        if (this.engine.onCpu.runHandlerOnCpu?.(post) && this.onCpu.canDefer(regs.cpu)) { this.deferHandler(regs, post, g, regs.ip, [BigInt(flags)]); return; }
        this.callWithRegs(regs, post, [g], kp, g, [BigInt(flags)]);
      };
    }
    if (fault) {
      kp.fault_handler = (_p, regs, trapnr) => {
        // a breakpoint in it: the call is made on the CPU, the fault's trap handling goes on when it returns (traps.ts)
        if (this.engine.onCpu.runHandlerOnCpu?.(fault) && this.onCpu.canDefer(regs.cpu)) { this.deferHandler(regs, fault, g, regs.ip, [BigInt(trapnr)]); return 0; }
        return Number(BigInt.asIntN(32, this.callWithRegs(regs, fault, [g], kp, g, [BigInt(trapnr)])));
      };
    }
    return kp;
  }

  /**
   * register_kprobe / register_kretprobe / register_jprobe of a guest
   * struct: its struct kprobe read (`make` builds the engine's probe around
   * it and registers it); on success the probe is remembered and the
   * resolved address written back to the guest's kp.addr, as Linux's
   * register_kprobe leaves it.
   */
  private registerGuest(g: bigint, make: (kp: Kprobe) => { r: number; probe?: Omit<CProbe, 'kp' | 'guest'> }): number {
    if (g === 0n || this.probes.has(g)) return -22;
    const kp = this.kprobeFrom(g);
    const { r, probe } = make(kp);
    if (r === 0 && probe) {
      this.probes.set(g, { kp, guest: g, ...probe });
      this.w64(g + BigInt(LAYOUT.kprobe.addr), kp.addr ?? 0n);
    }
    return r;
  }

  private registerKprobe(g: bigint): number {
    return this.registerGuest(g, kp => {
      this.kprobeHandlers.set(kp, this.handlerAddrs(g, [LAYOUT.kprobe.pre_handler, LAYOUT.kprobe.post_handler]));
      return {
        r: this.engine.registerKprobe(kp),
        probe: { handlers: this.handlerAddrs(g, [LAYOUT.kprobe.pre_handler, LAYOUT.kprobe.post_handler, LAYOUT.kprobe.fault_handler]) },
      };
    });
  }

  /** a module kprobe's C pre / post handlers, by its engine kprobe */
  private readonly kprobeHandlers = new WeakMap<Kprobe, bigint[]>();

  /** whether the debugger runs a C pre / post handler of kp on the CPU (it has a breakpoint in it) */
  handlersOnCpu(kp: Kprobe): boolean {
    const hs = this.kprobeHandlers.get(kp);
    return hs !== undefined && hs.some(h => this.engine.onCpu.runHandlerOnCpu?.(h) ?? false);
  }

  private registerKretprobe(g: bigint): number {
    return this.registerGuest(g, kp => {
      // a kretprobe's embedded kprobe has no handlers of its own
      delete kp.pre_handler; delete kp.post_handler; delete kp.fault_handler;
      const L = LAYOUT.kretprobe;
      const handler = this.r64(g + BigInt(L.handler)), entry = this.r64(g + BigInt(L.entry_handler));
      const rp: Kretprobe = {
        kp, maxactive: this.mem().read32(mustVAddr(g + BigInt(L.maxactive))) | 0, data_size: Number(this.r64(g + BigInt(L.data_size))),
      };
      // the return handler's context stands at the trampoline, its real return address the instance's
      if (handler) {
        this.returnHandlers.set(rp, handler);
        rp.handler = (ri, regs) => {
          // a breakpoint in it: the call is made on the CPU, the trampoline's walk goes on when it returns
          if (this.engine.onCpu.runHandlerOnCpu?.(handler) && this.onCpu.canDefer(regs.cpu)) { this.deferHandler(regs, handler, g, regs.ip, [], this.instance(ri, g), ri.ret_addr); return 0; }
          return Number(BigInt.asIntN(32, this.callWithRegs(regs, handler, [this.instance(ri, g)], kp, g, [], undefined, ri.ret_addr)));
        };
      }
      if (entry) {
        rp.entry_handler = (ri, regs) => {
          // a breakpoint in it: the call is made on the CPU, pre_handler_kretprobe goes on when it returns (chainHandlerOnCpu)
          if (this.engine.onCpu.runHandlerOnCpu?.(entry) && this.onCpu.canDefer(regs.cpu)) { this.deferHandler(regs, entry, g, kp.addr ?? regs.ip, [], this.instance(ri, g)); return 0; }
          return Number(BigInt.asIntN(32, this.callWithRegs(regs, entry, [this.instance(ri, g)], kp, g, [], kp.addr)));
        };
      }
      return { r: errnoOf(this.engine.registerKretprobeResult(rp)), probe: { rp, handlers: [handler, entry].filter(x => x !== 0n) } };
    });
  }

  private registerJprobe(g: bigint): number {
    return this.registerGuest(g, kp => {
      delete kp.pre_handler; delete kp.post_handler; delete kp.fault_handler;
      const entry = this.r64(g + BigInt(LAYOUT.jprobe.entry));
      if (entry === 0n) return { r: -22 };
      // the entry runs with the probed function's arguments (the engine saves and restores the context around it)
      const jp: Jprobe = {
        kp, entry: (args, regs) => {
          // a breakpoint in it: the call is made on the CPU, the jprobe's longjmp comes when it returns (chainHandlerOnCpu)
          if (this.engine.onCpu.runHandlerOnCpu?.(entry) && this.onCpu.canDefer(regs.cpu)) {
            const cpu = regs.cpu;
            this.contexts.push(cpu, this.engine.kernel.arch.regs.length, kp.addr ?? regs.ip, undefined, true);
            this.onCpu.defer(cpu, entry, [...args], 0n, g);
            return;
          }
          this.inContext(regs.cpu, kp.addr ?? regs.ip, undefined, () => this.engine.nested.call(regs.cpu, entry, args));
        },
      };
      return { r: this.engine.registerJprobe(jp), probe: { jp, handlers: [entry] } };
    });
  }

  /**
   * register_kwatch(addr, length, type, handler): the debug register number
   * or a negative errno (machine.kwatch's rules); the C handler is called as
   * handler(struct kwatch *, struct pt_regs *) after the access (x86) / the
   * stepped access (arm64), the struct telling the address and kind of it.
   */
  private registerKwatch(addr: bigint, length: number, type: number, handler: bigint): number {
    const kw = this.kwatch?.();
    if (!kw) return -19; // -ENODEV: no kernel watchpoints on this machine
    if (handler === 0n) return EINVAL;
    const g = this.engine.data.alloc(KWATCH.size, 8);
    const mem = this.mem();
    this.w64(g + BigInt(KWATCH.addr), addr);
    mem.write8(mustVAddr(g + BigInt(KWATCH.length)), length);
    mem.write8(mustVAddr(g + BigInt(KWATCH.type)), type);
    this.w64(g + BigInt(KWATCH.handler), handler);
    const reg = kw.register_kwatch(addr, length, type, ctx => {
      this.w64(g + BigInt(KWATCH.accessAddr), ctx.addr);
      this.w32(g + BigInt(KWATCH.access), ACCESS_BITS[ctx.access]);
      this.callHandler(ctx.hit.regs, handler, [g], []);
    });
    if (reg < 0) return reg;
    this.w32(g + BigInt(KWATCH.debugreg), reg);
    this.kwatches.set(reg, g);
    return reg;
  }

  private handlerAddrs(g: bigint, offsets: readonly number[]): bigint[] {
    return offsets.map(o => this.r64(g + BigInt(o))).filter(x => x !== 0n);
  }

  /** The probes C code registered (register_kprobe & co.): the engine's probe, the guest struct, the handlers' addresses. */
  registered(): readonly { kp: Kprobe; guest: bigint; handlers: readonly bigint[] }[] {
    return [...this.probes.values()];
  }

  /**
   * Probes still registered whose struct or handlers are in [lo, hi) (a
   * module going away): the documentation's warning, in the kernel log, for
   * each; hitting one later runs freed code, which oopses naming the module.
   */
  warnOrphans(lo: bigint, hi: bigint, module: string): number {
    let n = 0;
    for (const c of this.probes.values()) {
      const inside = (a: bigint): boolean => a >= lo && a < hi;
      if (!inside(c.guest) && !c.handlers.some(inside)) continue;
      n++;
      const where = this.engine.describer.where(c.kp.addr ?? 0n);
      this.engine.kernel.printk(-1, `kprobe-debug: module ${module} unloaded with its ${c.jp ? 'jprobe' : c.rp ? 'kretprobe' : 'kprobe'} at ${where} still registered: `
        + 'its handlers and struct are freed memory (unregister probes in module_exit)', 'emulator');
    }
    return n;
  }

  /**
   * register_kprobes / register_kretprobes(array, num): each in turn; at the
   * first error those registered so far are unregistered and the error
   * returned; num <= 0 is -EINVAL (kernel/kprobes.c).
   */
  private registerMany(array: bigint, num: bigint, register: (g: bigint) => number): number {
    const n = Number(BigInt.asIntN(32, num));
    if (n <= 0 || array === 0n) return EINVAL;
    for (let i = 0; i < n; i++) {
      const r = register(this.r64(array + BigInt(8 * i)));
      if (r < 0) {
        if (i > 0) this.unregisterMany(array, BigInt(i));
        return r;
      }
    }
    return 0;
  }

  /** unregister_kprobes / unregister_kretprobes(array, num); num <= 0: nothing */
  private unregisterMany(array: bigint, num: bigint): void {
    const n = Number(BigInt.asIntN(32, num));
    if (n <= 0 || array === 0n) return;
    for (let i = 0; i < n; i++) this.unregister(this.r64(array + BigInt(8 * i)));
  }

  /**
   * kallsyms_lookup_name(): the image's symbols, then the live modules';
   * "module:symbol" looks in that module only (module_kallsyms_lookup_name).
   */
  private lookupName(name: string): bigint | undefined {
    const syms = this.engine.kernel.image.symbols;
    const colon = name.indexOf(':');
    if (colon < 0) return name ? syms.lookup(name)?.value : undefined;
    const mod = name.slice(0, colon), sym = name.slice(colon + 1);
    return syms.all().find(s => s.module === mod && s.name === sym)?.value;
  }

  private unregister(g: bigint): void {
    const c = this.probes.get(g);
    // not registered: Linux clears its addr (unregister_kprobes: __unregister_kprobe_top failed)
    if (!c) {
      const at = g + BigInt(LAYOUT.kprobe.addr);
      if (g !== 0n && this.mem().isMapped(mustVAddr(at), 8)) this.w64(at, 0n);
      return;
    }
    if (c.jp) this.engine.unregisterJprobe(c.jp);
    else if (c.rp) this.engine.unregisterKretprobe(c.rp);
    else this.engine.unregisterKprobe(c.kp);
    this.probes.delete(g);
  }

  /** a module kretprobe's C return handler, by its engine kretprobe */
  private readonly returnHandlers = new WeakMap<Kretprobe, bigint>();

  /** whether the debugger runs rp's C return handler on the CPU (it has a breakpoint in it) */
  returnHandlerOnCpu(rp: Kretprobe): boolean {
    const h = this.returnHandlers.get(rp);
    return h !== undefined && (this.engine.onCpu.runHandlerOnCpu?.(h) ?? false);
  }

  /** a struct kretprobe_instance for the C handler (in the engine's data area, one per instance) */
  private readonly instances = new Map<KretprobeInstance, bigint>();
  private instance(ri: KretprobeInstance, rpGuest: bigint): bigint {
    let a = this.instances.get(ri);
    if (a === undefined) { a = this.engine.data.alloc(LAYOUT.kretprobe_instance.size, 8); this.instances.set(ri, a); }
    const L = LAYOUT.kretprobe_instance;
    this.w64(a + BigInt(L.rp), rpGuest);
    this.w64(a + BigInt(L.ret_addr), ri.ret_addr);
    this.w64(a + BigInt(L.task), publishTaskStruct(this.engine.kernel.mem, ri.task));
    this.w64(a + BigInt(L.data), ri.data);
    return a;
  }

  /**
   * Call a module handler fn(args..., regs, extra...) on the probed CPU with
   * a pt_regs frame in guest memory; the frame is read back into the
   * registers afterwards; the guest struct's nmissed / flags are updated.
   */
  private callWithRegs(regs: PtRegs, fn: bigint, args: readonly bigint[], kp: Kprobe, g: bigint, extra: readonly bigint[] = [],
    pc: bigint = regs.ip, returnTo?: bigint): bigint {
    const v = this.callHandler(regs, fn, args, extra, pc, returnTo);
    // the engine's counters and flags back in the guest's struct kprobe
    this.w64(g + BigInt(LAYOUT.kprobe.nmissed), BigInt(kp.nmissed ?? 0));
    this.w32(g + BigInt(LAYOUT.kprobe.flags), kp.flags ?? 0);
    return v;
  }

  /** fn(args..., struct pt_regs *, extra...) on the CPU, the frame written from regs before and read back after */
  private callHandler(regs: PtRegs, fn: bigint, args: readonly bigint[], extra: readonly bigint[], pc: bigint = regs.ip, returnTo?: bigint): bigint {
    const layout = this.ptRegsFrame;
    const frame = this.frames.pop() ?? this.engine.data.alloc(layout.length * 8, 16);
    try {
      layout.forEach((f, i) => this.w64(frame + BigInt(i * 8), typeof f === 'string' ? regs.get(f) : f.value));
      const v = this.inContext(regs.cpu, pc, returnTo, () => this.engine.nested.call(regs.cpu, fn, [...args, frame, ...extra]));
      layout.forEach((f, i) => { if (typeof f === 'string') regs.set(f, this.r64(frame + BigInt(i * 8))); });
      return v;
    } finally {
      this.frames.push(frame);
    }
  }

  /** a pre / post handler the debugger stops in: its frame and context as callHandler makes them, the call made by onCpu */
  private deferHandler(regs: PtRegs, fn: bigint, g: bigint, pc: bigint, extra: readonly bigint[] = [], first: bigint = g, returnTo?: bigint): void {
    const layout = this.ptRegsFrame;
    const frame = this.frames.pop() ?? this.engine.data.alloc(layout.length * 8, 16);
    layout.forEach((f, i) => this.w64(frame + BigInt(i * 8), typeof f === 'string' ? regs.get(f) : f.value));
    const cpu = regs.cpu;
    this.contexts.push(cpu, this.engine.kernel.arch.regs.length, pc, returnTo, true);
    this.onCpu.defer(cpu, fn, [first, frame, ...extra], frame, g);
  }

  /** the deferred handler returned (the probed context is back): what callWithRegs does after its call */
  private handlerReturned(cpu: Cpu, frame: bigint, g: bigint): void {
    const regs = this.engine.percpu.regsOf(cpu);
    // frame 0: a jprobe entry (no struct pt_regs; its longjmp puts the context back)
    if (frame !== 0n) {
      this.ptRegsFrame.forEach((f, i) => { if (typeof f === 'string') regs.set(f, this.r64(frame + BigInt(i * 8))); });
      this.frames.push(frame);
    }
    this.contexts.popOf(cpu.id);
    const kp = this.probes.get(g)?.kp;
    if (kp) {
      this.w64(g + BigInt(LAYOUT.kprobe.nmissed), BigInt(kp.nmissed ?? 0));
      this.w32(g + BigInt(LAYOUT.kprobe.flags), kp.flags ?? 0);
    }
  }

  // ------------------------------------------------ handler contexts, stack traces

  private readonly contexts = new HandlerContexts();

  /** run a handler call with the probed context (cpu's registers now) recorded for stack traces and preempt_count() */
  private inContext<T>(cpu: Cpu, pc: bigint, returnTo: bigint | undefined, call: () => T): T {
    this.contexts.push(cpu, this.engine.kernel.arch.regs.length, pc, returnTo);
    try {
      return call();
    } finally {
      this.contexts.pop();
    }
  }

  /** what a walk through the handler calls in progress needs of the engine */
  private get stackEngine(): HandlerStackEngine {
    const e = this.engine;
    return {
      kernel: e.kernel,
      // a handler's return stubs: the nested call's, the one of a handler run on the CPU
      stubs: () => [e.nested.stub(), this.onCpu.stub()].filter(s => s !== 0n),
      onCpuStub: () => this.onCpu.stub(),
      onCpuEntrySps: (cpu) => this.onCpu.entrySps(cpu),
      isTrampoline: (a) => e.kretprobes.isTrampoline(a),
      probedAddressOfSlot: this.probedAddressOfSlot,
      readCode: (a, n) => e.arming.readTextWithoutProbes(e.kernel.mem, a, n),
    };
  }

  /**
   * The stack of a CPU stopped inside C handlers (a debugger's stop in a
   * handler run on the CPU): its frames, then at each handler-call return
   * stub the probed context the handler was called from (handlerStack.ts);
   * undefined when no handler call is in progress on the CPU.
   */
  handlerStack(cpu: Cpu, pc: bigint): HandlerStackFrame[] | undefined {
    if (!this.contexts.any(cpu.id)) return undefined;
    return this.contexts.walk(this.stackEngine, cpu, this.engine.kernel.current(cpu.id), undefined, pc);
  }

  /**
   * The return addresses of the context calling stack_trace_save (its stub
   * trapped with the return address where the call left it), innermost
   * first: the caller's own frames; at the engine's handler-call return
   * (a C probe handler running) the trace goes on in the probed context
   * the handler was called from, from its pc, and so on outwards; the
   * kretprobe trampoline entries are replaced by the real return
   * addresses (the instance being handled first), as Linux's unwinder
   * does with kretprobe_find_ret_addr().
   */
  private stackTrace(cpu: Cpu, regs: PtRegs): bigint[] {
    const k = this.engine.kernel;
    const abi = k.arch.abi;
    const task = k.current(cpu.id);
    const ra = abi.returnAddress;
    const now = k.arch.regs.map((_, i) => cpu.getReg(i));
    let pc: bigint;
    if (ra.kind === 'stack') {
      const slot = regs.sp + BigInt(ra.offset);
      pc = this.r64(slot);
      now[abi.spReg] = slot + 8n;
    } else pc = cpu.getReg(ra.reg);
    const raw = this.contexts.walk(this.stackEngine, cpu, task, now, pc).map(f => f.addr);
    return fixupStackTrace(this.engine, task, raw, cpu.id).map(f => f.addr);
  }

  /** stack_trace_save(store, size, skipnr): the trace, skipnr entries left out, at most size stored; how many */
  private stackTraceSave(cpu: Cpu, regs: PtRegs, store: bigint, size: number, skipnr: number): number {
    const trace = this.stackTrace(cpu, regs).slice(skipnr, skipnr + size);
    trace.forEach((a, i) => this.w64(store + BigInt(8 * i), a));
    return trace.length;
  }

  /** stack_trace_print(entries, nr, spaces): "%*c%pS" per entry */
  private stackTracePrint(cpu: Cpu, entries: bigint, nr: number, spaces: number): void {
    if (entries === 0n) return;
    const pad = ' '.repeat(Math.max(0, spaces) + 1);
    const lines: string[] = [];
    for (let i = 0; i < nr; i++) {
      const a = this.r64(entries + BigInt(8 * i));
      // the engine's code and the kernel-thread return page (ret_from_fork) by their names
      const own = emulatorCodeAt(this.engine.kernel, a);
      lines.push(pad + (own ? own.name : this.engine.kernel.image.symbols.format(a, true)));
    }
    if (lines.length) this.engine.kernel.printk(cpu.id, lines.join('\n'), 'kernel');
  }

  // ------------------------------------------------ printk, time

  /** the CPU's virtual time in ns (the clock printk stamps and KP_HC_TIME_NS read) */
  private nowNs(cpu: number): bigint {
    const clock = this.engine.kernel.clock as { now?(cpu: number): bigint; nowNs(cpu?: number): number };
    return clock.now ? clock.now(cpu) : BigInt(Math.round(clock.nowNs(cpu)));
  }

  /**
   * _printk(fmt, ...): the message formatted as Linux's vsprintf does
   * (emulator/kernel/printk.ts), the variadic arguments where the calling
   * convention puts them (the argument registers after fmt, then the
   * stack), stored as printk stores it (KERN_<LEVEL> taken off, KERN_CONT
   * continuing the CPU's line). Returns the message's length.
   */
  private printk(cpu: Cpu, regs: PtRegs): number {
    const k = this.engine.kernel;
    const mem = cpu.mem;
    const fmt = readCBytes(mem, regs.arg(0), PRINTK_FMT_MAX) ?? new Uint8Array(0);
    const text = vsprintf(fmt, this.varArgs(regs, 1), kernelVsprintfEnv(k, mem));
    const log = (k as { log?: PrintkLog }).log;
    if (log) log.printkBytes(cpu.id, text, this.nowNs(cpu.id));
    else k.printk(cpu.id, new TextDecoder().decode(text).replace(/^(\x01[0-7c])+/, ''), 'kernel');
    let n = text.length;
    for (let i = 0; i + 1 < text.length && text[i] === 1; i += 2) n -= 2;
    return n;
  }

  /** the arguments of a variadic call from argument `first` on: registers, then the caller's stack slots */
  private varArgs(regs: PtRegs, first: number): VaArgs {
    const abi = this.engine.kernel.arch.abi;
    const nregs = abi.argRegs.length;
    // the stack arguments start above the return address when the call pushed one (x86), else at sp
    const ra = abi.returnAddress;
    const stack = ra.kind === 'stack' ? regs.sp + BigInt(ra.offset) + 8n : regs.sp;
    let i = first;
    return {
      next: () => {
        const n = i++;
        if (n < nregs) return regs.arg(n);
        try { return this.r64(stack + BigInt(8 * (n - nregs))); } catch { return 0n; }
      },
    };
  }

  // ------------------------------------------------ random numbers

  private randomState: bigint | undefined;

  /** the kernel's random stream: xorshift64* from the machine's random seed (runs are reproducible) */
  private random(): bigint {
    // the seed is the Kernel's (Machine option randomSeed), not part of KernelApi
    const seed = (this.engine.kernel as { randomSeed?: bigint }).randomSeed ?? 0n;
    let x = this.randomState ?? ((0x853c49e6748fea9bn ^ seed) | 1n);
    x ^= x >> 12n; x ^= (x << 25n) & 0xffffffffffffffffn; x ^= x >> 27n;
    this.randomState = x;
    return BigInt.asUintN(64, x * 0x2545f4914f6cdd1dn);
  }

  /** get_random_bytes(buf, len) */
  private randomBytes(buf: bigint, len: number): void {
    const out = new Uint8Array(len);
    for (let i = 0; i < len; i += 8) {
      let r = this.random();
      for (let j = i; j < Math.min(len, i + 8); j++) { out[j] = Number(r & 0xffn); r >>= 8n; }
    }
    if (len) this.mem().writeBytes(mustVAddr(buf), out);
  }
}

