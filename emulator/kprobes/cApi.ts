/**
 * The kprobes API for C modules (issue 17): register_kprobe(),
 * unregister_kprobe(), enable_/disable_kprobe(), register_/
 * unregister_kretprobe(), dump_stack() and kallsyms_lookup_name() as
 * kernel functions a module calls. Each is a stub of engine code (one
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
 * Ported for x86_64, aarch64 and riscv64 (Linux's pt_regs layouts, PT_REGS below).
 */
import type { Cpu } from '../arch/types';
import { errnoOf } from './regResult';
import type { KprobesEngine } from './core';
import type { Jprobe, Kprobe, Kretprobe, KretprobeInstance } from './kprobe';
import type { PtRegs } from './ptRegs';
import { mustVAddr } from '../memory/address';
import { taskAddress } from '../probes/env';
import { dumpStackLines } from '../probes/stack';

/** field offsets of examples/include/linux/kprobes.h (LP64) */
export const LAYOUT = {
  kprobe: { nmissed: 32, addr: 40, symbol_name: 48, offset: 56, pre_handler: 64, post_handler: 72, fault_handler: 80, flags: 92, size: 96 },
  kretprobe: { handler: 96, entry_handler: 104, maxactive: 112, nmissed: 116, data_size: 120, size: 128 },
  kretprobe_instance: { rp: 0, ret_addr: 8, task: 16, data: 24, size: 32 },
  jprobe: { entry: 96, size: 104 },
} as const;

/** struct pt_regs of each arch as Linux lays it out: register names (PtRegs names, '' = a constant) in order */
const PT_REGS: Readonly<Record<string, readonly (string | { name: string; value: bigint })[]>> = {
  x86_64: ['r15', 'r14', 'r13', 'r12', 'bp', 'bx', 'r11', 'r10', 'r9', 'r8', 'ax', 'cx', 'dx', 'si', 'di',
    { name: 'orig_ax', value: -1n }, 'ip', { name: 'cs', value: 0x10n }, 'flags', 'sp', { name: 'ss', value: 0x18n }],
  // struct user_pt_regs: regs[31], sp, pc, pstate
  aarch64: [...Array.from({ length: 31 }, (_, i) => `x${i}`), 'sp', 'pc', 'pstate'],
  // struct pt_regs: epc, ra .. t6, status, badaddr, cause, orig_a0 (the port's register order)
  riscv64: ['epc', 'ra', 'sp', 'gp', 'tp', 't0', 't1', 't2', 's0', 's1', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7',
    's2', 's3', 's4', 's5', 's6', 's7', 's8', 's9', 's10', 's11', 't3', 't4', 't5', 't6', 'status', 'badaddr', 'cause', 'orig_a0'],
};

export const C_API_FUNCTIONS = [
  'register_kprobe', 'unregister_kprobe', 'enable_kprobe', 'disable_kprobe',
  'register_kretprobe', 'unregister_kretprobe', 'register_jprobe', 'unregister_jprobe', 'jprobe_return',
  'dump_stack', 'kallsyms_lookup_name',
] as const;

interface CProbe { kp: Kprobe; rp?: Kretprobe; jp?: Jprobe; guest: bigint; handlers: bigint[] }

export class KprobesCApi {
  private readonly stubs = new Map<string, bigint>();
  /** guest struct kprobe / kretprobe address -> the engine's probe */
  private readonly probes = new Map<bigint, CProbe>();
  private frames: bigint[] = [];

  constructor(private readonly engine: KprobesEngine) {}

  /** whether the arch's pt_regs frame is described (the API is offered) */
  get supported(): boolean { return PT_REGS[this.engine.kernel.arch.name] !== undefined; }

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
      case 'register_kretprobe': ret = BigInt(this.registerKretprobe(arg(0))); break;
      case 'unregister_kretprobe': case 'unregister_jprobe': this.unregister(arg(0)); break;
      case 'register_jprobe': ret = BigInt(this.registerJprobe(arg(0))); break;
      // the entry's remaining code returns to the engine's nested call, which restores the probed context
      case 'jprobe_return': break;
      case 'dump_stack': {
        // the caller's frame first: the stub's return address is in the module function that called it
        const lines = dumpStackLines(this.engine.kernel, this.engine, cpu);
        this.engine.kernel.printk(cpu.id, lines.join('\n'), 'kernel');
        break;
      }
      case 'kallsyms_lookup_name': ret = this.engine.kernel.image.symbols.lookup(this.cString(arg(0)))?.value ?? 0n; break;
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
    kp.offset = BigInt(this.r32(g + BigInt(L.offset)));
    const pre = this.r64(g + BigInt(L.pre_handler)), post = this.r64(g + BigInt(L.post_handler)), fault = this.r64(g + BigInt(L.fault_handler));
    if (pre) kp.pre_handler = (_p, regs) => Number(BigInt.asIntN(32, this.callWithRegs(regs, pre, [g], kp, g)));
    if (post) kp.post_handler = (_p, regs, flags) => { this.callWithRegs(regs, post, [g], kp, g, [BigInt(flags)]); };
    if (fault) kp.fault_handler = (_p, regs, trapnr) => Number(BigInt.asIntN(32, this.callWithRegs(regs, fault, [g], kp, g, [BigInt(trapnr)])));
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
    return this.registerGuest(g, kp => ({
      r: this.engine.registerKprobe(kp),
      probe: { handlers: this.handlerAddrs(g, [LAYOUT.kprobe.pre_handler, LAYOUT.kprobe.post_handler, LAYOUT.kprobe.fault_handler]) },
    }));
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
      if (handler) rp.handler = (ri, regs) => Number(BigInt.asIntN(32, this.callWithRegs(regs, handler, [this.instance(ri, g)], kp, g)));
      if (entry) rp.entry_handler = (ri, regs) => Number(BigInt.asIntN(32, this.callWithRegs(regs, entry, [this.instance(ri, g)], kp, g)));
      return { r: errnoOf(this.engine.registerKretprobeResult(rp)), probe: { rp, handlers: [handler, entry].filter(x => x !== 0n) } };
    });
  }

  private registerJprobe(g: bigint): number {
    return this.registerGuest(g, kp => {
      delete kp.pre_handler; delete kp.post_handler; delete kp.fault_handler;
      const entry = this.r64(g + BigInt(LAYOUT.jprobe.entry));
      if (entry === 0n) return { r: -22 };
      // the entry runs with the probed function's arguments (the engine saves and restores the context around it)
      const jp: Jprobe = { kp, entry: (args, regs) => { this.engine.callKernelFunction(regs.cpu, entry, args); } };
      return { r: this.engine.registerJprobe(jp), probe: { jp, handlers: [entry] } };
    });
  }

  private handlerAddrs(g: bigint, offsets: readonly number[]): bigint[] {
    return offsets.map(o => this.r64(g + BigInt(o))).filter(x => x !== 0n);
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
      const where = this.engine.where(c.kp.addr ?? 0n);
      this.engine.kernel.printk(-1, `kprobe-debug: module ${module} unloaded with its ${c.jp ? 'jprobe' : c.rp ? 'kretprobe' : 'kprobe'} at ${where} still registered: `
        + 'its handlers and struct are freed memory (unregister probes in module_exit)', 'emulator');
    }
    return n;
  }

  private unregister(g: bigint): void {
    const c = this.probes.get(g);
    if (!c) return;
    if (c.jp) this.engine.unregisterJprobe(c.jp);
    else if (c.rp) this.engine.unregisterKretprobe(c.rp);
    else this.engine.unregisterKprobe(c.kp);
    this.probes.delete(g);
  }

  /** a struct kretprobe_instance for the C handler (in the engine's data area, one per instance) */
  private readonly instances = new WeakMap<KretprobeInstance, bigint>();
  private instance(ri: KretprobeInstance, rpGuest: bigint): bigint {
    let a = this.instances.get(ri);
    if (a === undefined) { a = this.engine.data.alloc(LAYOUT.kretprobe_instance.size, 8); this.instances.set(ri, a); }
    const L = LAYOUT.kretprobe_instance;
    this.w64(a + BigInt(L.rp), rpGuest);
    this.w64(a + BigInt(L.ret_addr), ri.ret_addr);
    this.w64(a + BigInt(L.task), taskAddress(ri.task));
    this.w64(a + BigInt(L.data), ri.data);
    return a;
  }

  /**
   * Call a module handler fn(args..., regs, extra...) on the probed CPU with
   * a pt_regs frame in guest memory; the frame is read back into the
   * registers afterwards; the guest struct's nmissed / flags are updated.
   */
  private callWithRegs(regs: PtRegs, fn: bigint, args: readonly bigint[], kp: Kprobe, g: bigint, extra: readonly bigint[] = []): bigint {
    const layout = PT_REGS[this.engine.kernel.arch.name];
    const frame = this.frames.pop() ?? this.engine.data.alloc(layout.length * 8, 16);
    try {
      layout.forEach((f, i) => this.w64(frame + BigInt(i * 8), typeof f === 'string' ? regs.get(f) : f.value));
      const v = this.engine.callKernelFunction(regs.cpu, fn, [...args, frame, ...extra]);
      layout.forEach((f, i) => { if (typeof f === 'string') regs.set(f, this.r64(frame + BigInt(i * 8))); });
      this.w64(g + BigInt(LAYOUT.kprobe.nmissed), BigInt(kp.nmissed ?? 0));
      this.w32(g + BigInt(LAYOUT.kprobe.flags), kp.flags ?? 0);
      return v;
    } finally {
      this.frames.push(frame);
    }
  }
}
