/**
 * Loadable modules (Linux kernel/module/main.c, as far as this kernel
 * needs it): a relocatable ELF object for the image's architecture is laid
 * out in the kernel's module area (the exec area, within the code model's
 * reach of the kernel text), its undefined symbols resolved against the
 * exported symbols (the live modules' globals, the kprobes C API, and the
 * image's EXPORT_SYMBOL / EXPORT_SYMBOL_GPL table, __ksymtab: exports.ts;
 * an image without __ksymtab exports every global, as before exports),
 * its relocations applied by the arch (apply_relocate_add), its init run
 * in a kernel thread ("insmod"), then its `.init*` sections freed; rmmod
 * runs its exit function in a thread and frees it.
 *
 *   init_module / cleanup_module  the module's init / exit (what module_init
 *                                 / module_exit alias); no init: nothing runs
 *   init returns < 0              the module is not loaded (its memory freed,
 *                                 probes placed in it [GONE]), as do_init_module
 *   init returns > 0              "suspiciously returned N, it should follow
 *                                 0/-E convention", loaded
 *   rmmod                         refused while another module uses it ("in
 *                                 use by"), without an exit function, or
 *                                 while its init runs
 *
 * Module memory is mapped per part (core, init) next to the exec area,
 * within every code model's reach of the kernel text. Freed module memory
 * (init sections after init, all of it at unload) is unmapped: touching
 * it is an oops naming the module ("executing freed memory of module X"),
 * never silent.
 * kprobes on freed code are killed ([GONE], kill_kprobe) through the
 * `onFree` hook the machine connects to the kprobes engine. Module symbols
 * are added to the kernel's symbol table (kallsyms.ts).
 */
import type { Kernel } from '../kernel';
import { Errno } from '../abi';
import type { ElfImage, ElfSection, ElfSymbol } from '../../elf/types';
import { fromVAddr, hex, mustVAddr, toVAddr } from '../../memory/address';
import { PERM_R, PERM_W, PERM_X, Region } from '../../memory/memory';
import { PAGE_SIZE } from '../../memory/backing';
import type { ArchModuleRelocs } from './relocations';
import { KallsymsTable } from './kallsyms';
import { moduleKprobeBlacklist } from './blacklist';
import { CompositeLines, moduleDebugImage, moduleLineTable } from './moduleLines';
import { KernelExport, licenseIsGplCompatible, readKsymtab } from './exports';
import { ModuleParam, ParamOpsTable, parseArgs, readParamTable } from './params';
import { ObjSymbol, RelObject, SHF_ALLOC, SHF_EXECINSTR, SHN_ABS, SHN_COMMON, SHN_UNDEF, modinfo, moduleName, parseRelObject } from './object';

const SHT_NOBITS = 8;
/** How far the module area reaches from the exec area, either side (x86_64 Linux's MODULES_LEN is about 1 GiB too). */
const MODULE_AREA = 0x40000000;
const sizeText = (n: number): string => n >= 1 << 20 ? `${Math.floor(n / (1 << 20))} MiB` : `${n} bytes`;
const STB_WEAK = 2, STT_SECTION = 3, STT_FILE = 4, STT_FUNC = 2, STT_OBJECT = 1;

export type ModuleState = 'coming' | 'live' | 'going' | 'unloaded';

export interface ModuleArea { readonly lo: bigint; readonly hi: bigint }

export interface KernelModule {
  readonly name: string;
  readonly path: string;
  state: ModuleState;
  readonly core: ModuleArea;
  /** the .init sections (null when none, or once freed: see initFreed) */
  readonly init: ModuleArea | null;
  initFreed: boolean;
  /** section name -> its address */
  readonly sections: ReadonlyMap<string, bigint>;
  readonly initFn?: bigint;
  readonly exitFn?: bigint;
  /** modules whose symbols this one uses / that use this one's (refcount) */
  readonly uses: Set<KernelModule>;
  readonly usedBy: Set<KernelModule>;
  /** the module parameters given at load (name=value) */
  readonly params: ReadonlyMap<string, string>;
  /** the module's own symbols (functions and objects) */
  readonly symbols: readonly ElfSymbol[];
  /** its DWARF at its load addresses (made on first use; undefined: none) */
  readonly debugImage?: () => ElfImage | undefined;
}

export interface ModuleHooks {
  /** code in [lo, hi) is gone (module unloaded, init freed): kill the probes there; how many */
  onFree?(lo: bigint, hi: bigint, module: KernelModule, why: 'unload' | 'init'): void;
  /** the module list changed (views) */
  onChange?(): void;
  /** functions the kernel provides besides the image's symbols (the kprobes API for C modules) */
  kernelFunction?(name: string): bigint | undefined;
}

/** A module that cannot be loaded: insmod's line (the errno in it); `logged`: the kernel log already has Linux's lines for it. */
export class ModuleError extends Error {
  constructor(message: string, readonly logged = false) { super(message); }
}

/** each kernel's module table (the DeleteModule hypercall finds it here; none: no module was ever loaded) */
const tables = new WeakMap<Kernel, ModuleTable>();
export function moduleTableOf(kernel: Kernel): ModuleTable | undefined { return tables.get(kernel); }

/** how a kernel makes its module table on first use (the machine that composes it says; none: no module support) */
const factories = new WeakMap<Kernel, () => ModuleTable>();
export function setModuleTableFactory(kernel: Kernel, make: () => ModuleTable): void { factories.set(kernel, make); }
/** The kernel's module table, made now if it has module support and none was made yet (init_module from user space). */
export function moduleTableFor(kernel: Kernel): ModuleTable | undefined { return tables.get(kernel) ?? factories.get(kernel)?.(); }

export class ModuleTable {
  private readonly mods = new Map<string, KernelModule>();
  private readonly freed: { lo: bigint; hi: bigint; module: string; why: string }[] = [];
  readonly kallsyms: KallsymsTable;
  /** the kernel's line table with the modules' (installed as the image's `lines`) */
  readonly lines: CompositeLines;
  /** insmod / rmmod work waiting for the previous init / exit to return (Linux serialises them) */
  private readonly queue: (() => void)[] = [];
  private busy = false;
  private readonly waiting = new Map<number, (rv: bigint) => void>();
  /** the image's __ksymtab (+ _gpl); null: the image has none, every global symbol is exported */
  readonly exports: ReadonlyMap<string, KernelExport> | null;

  constructor(readonly kernel: Kernel, readonly relocs: ArchModuleRelocs, readonly hooks: ModuleHooks = {}) {
    this.exports = readKsymtab(kernel.image);
    this.paramOps = new ParamOpsTable(kernel.mem, size => fromVAddr(this.mapArea(size, 'param_ops').base));
    tables.set(kernel, this);
    this.kallsyms = kernel.image.symbols instanceof KallsymsTable ? kernel.image.symbols : new KallsymsTable(kernel.image.symbols);
    kernel.image.symbols = this.kallsyms;
    const base = kernel.image.lines;
    this.lines = base instanceof CompositeLines ? base : new CompositeLines(base);
    Object.defineProperty(kernel.image, 'lines', { get: () => this.lines, configurable: true });
    kernel.onTaskExit(t => {
      const done = this.waiting.get(t.pid);
      if (!done) return;
      this.waiting.delete(t.pid);
      done(BigInt.asIntN(64, (t as { returnValue?: bigint }).returnValue ?? 0n));
    });
    kernel.addTrapHook((cpu, trap) => {
      if (cpu.userMode || trap.kind !== 'pageFault') return false;
      const a = trap.addr;
      const f = this.freed.find(x => a >= x.lo && a < x.hi);
      if (!f) return false;
      const what = trap.access === 'exec' ? 'executing' : trap.access === 'write' ? 'writing' : 'reading';
      kernel.oops(cpu, trap, `${what} freed memory of module ${f.module} (${f.why}) at ${hex(a)}`);
      return true;
    });
  }

  list(): readonly KernelModule[] { return [...this.mods.values()]; }
  get(name: string): KernelModule | undefined { return this.mods.get(name); }

  /**
   * insmod: load a module from its bytes. Throws a ModuleError (or an
   * ImageError for a bad file) with the line Linux would print; the kernel
   * is left as it was. The init function runs when the machine runs (in
   * a kernel thread); `done` hears the outcome.
   */
  load(bytes: Uint8Array, path: string, params: readonly string[] = [], done?: (err: string | null) => void): KernelModule {
    const obj = parseRelObject(bytes, path);
    const k = this.kernel;
    if (!k.arch.elfMachines.includes(obj.image.machine)) {
      throw new ModuleError(`${path}: module for ${obj.image.archName}, and this kernel is ${k.arch.name} (Exec format error, err -8)`);
    }
    const name = moduleName(obj, path);
    if (this.mods.has(name)) throw new ModuleError(`${name}: module is already loaded (File exists, err -17)`);
    // "name=value" or "name" alone (parse_args: a bool set to true)
    const given: ModuleParam[] = params.map(p => {
      const eq = p.indexOf('=');
      return eq < 0 ? { name: p } : { name: p.slice(0, eq), value: p.slice(eq + 1) };
    });
    const paramMap = new Map<string, string>(given.map(p => [p.name, p.value ?? '']));
    // layout: core (everything allocated but .init*) and init
    const alloc = obj.sections.filter(s => (s.flags & SHF_ALLOC) !== 0n && s.size > 0n);
    const isInit = (s: ElfSection): boolean => s.name.startsWith('.init');
    const place = (secs: ElfSection[]): { size: number; at: Map<number, number> } => {
      let off = 0;
      const at = new Map<number, number>();
      // text first, then the rest (as layout_sections groups by flags)
      for (const s of [...secs.filter(x => (x.flags & SHF_EXECINSTR) !== 0n), ...secs.filter(x => (x.flags & SHF_EXECINSTR) === 0n)]) {
        const a = Math.max(1, Number(s.addralign));
        off = Math.ceil(off / a) * a;
        at.set(s.index, off);
        off += Number(s.size);
      }
      return { size: off, at };
    };
    const coreL = place(alloc.filter(s => !isInit(s)));
    const initL = place(alloc.filter(isInit));
    for (const [part, l] of [['core', coreL], ['init', initL]] as const) {
      if (!Number.isSafeInteger(l.size) || l.size > MODULE_AREA) {
        throw new ModuleError(`${name}: module_alloc of its ${part} (${sizeText(l.size)}) failed: larger than the module area (${sizeText(MODULE_AREA)}) (Cannot allocate memory, err -12)`);
      }
    }
    const addrOf = new Map<number, bigint>();
    let core: ModuleArea, init: ModuleArea | null = null;
    const regions: Region[] = [];
    try {
      const cr = this.mapArea(Math.max(coreL.size, 1), name);
      regions.push(cr);
      core = { lo: fromVAddr(cr.base), hi: fromVAddr(cr.base) + BigInt(Math.max(coreL.size, 1)) };
      for (const [i, o] of coreL.at) addrOf.set(i, core.lo + BigInt(o));
      if (initL.size > 0) {
        const ir = this.mapArea(initL.size, `${name} (init)`);
        regions.push(ir);
        init = { lo: fromVAddr(ir.base), hi: fromVAddr(ir.base) + BigInt(initL.size) };
        for (const [i, o] of initL.at) addrOf.set(i, init.lo + BigInt(o));
      }
    } catch (e) {
      for (const r of regions) k.mem.unmap(r);
      throw new ModuleError(`${name}: no room in the module area (${e instanceof Error ? e.message : String(e)}) (Cannot allocate memory, err -12)`);
    }
    const unwind = (): void => { for (const r of regions) k.mem.unmap(r); };
    // simplify_symbols
    const values: bigint[] = [];
    const uses = new Set<KernelModule>();
    const gplOk = licenseIsGplCompatible(modinfo(obj, 'license'));
    try {
      for (const s of obj.symbols) values.push(this.symbolValue(name, obj, s, addrOf, uses, gplOk));
    } catch (e) { unwind(); throw e; }
    // apply_relocations, on copies of the section bytes
    const images = new Map<number, Uint8Array>();
    // .bss needs no image: the fresh area is zero, and its pages stay untouched on the host
    for (const s of alloc) if (s.type !== SHT_NOBITS) images.set(s.index, s.data.slice());
    for (const [target, relas] of obj.relas) {
      const sec = obj.sections[target];
      const bytes = images.get(target);
      const addr = addrOf.get(target);
      if (!bytes || addr === undefined) continue;
      const err = this.relocs.applyRelocateAdd({ bytes, addr, name: sec.name }, relas, i => values[i]);
      if (err) { unwind(); throw new ModuleError(`${name}: ${err} (Invalid argument, err -22)`); }
    }
    for (const [i, b] of images) k.mem.writeBytes(mustVAddr(addrOf.get(i) as bigint), b, 'loader');
    const paramErr = this.setParams(name, obj, addrOf, given);
    if (paramErr) { unwind(); throw paramErr; }
    const symbols: ElfSymbol[] = [];
    for (const s of obj.symbols) {
      if (s.shndx === SHN_UNDEF || s.shndx >= 0xff00 || s.type === STT_SECTION || s.type === STT_FILE || !s.name) continue;
      if (s.type !== STT_FUNC && s.type !== STT_OBJECT) continue;
      symbols.push({
        name: s.name, value: values[s.index], size: s.size, type: s.type === STT_FUNC ? 'func' : 'object',
        bind: s.bind === 1 ? 'global' : s.bind === STB_WEAK ? 'weak' : 'local', shndx: s.shndx, module: name,
      });
    }
    const sections = new Map<string, bigint>();
    for (const [i, a] of addrOf) sections.set(obj.sections[i].name, a);
    const fn = (n: string): bigint | undefined => {
      const s = obj.symbols.find(x => x.name === n && x.shndx !== SHN_UNDEF && x.type === STT_FUNC);
      return s ? values[s.index] : undefined;
    };
    const mod: KernelModule = {
      name, path, state: 'coming', core, init, initFreed: false, sections, initFn: fn('init_module'), exitFn: fn('cleanup_module'),
      uses, usedBy: new Set(), params: paramMap, symbols, debugImage: lazy(() => moduleDebugImage(this.kernel.image, obj, this.relocs, values)),
    };
    for (const u of uses) u.usedBy.add(mod);
    this.mods.set(name, mod);
    this.kallsyms.add(name, symbols, init ? [core, init] : [core]);
    const table = moduleLineTable(obj, this.relocs, values);
    if (table) this.lines.add(name, table, init ? [core, init] : [core]);
    // kprobes' module notifier, first on the chain: the module's own blacklist before anything can probe it
    k.setModuleBlacklist(name, moduleKprobeBlacklist(name, alloc.map(sec => ({
      name: sec.name, addr: addrOf.get(sec.index) as bigint, size: sec.size, exec: (sec.flags & SHF_EXECINSTR) !== 0n,
      init: isInit(sec), bytes: images.get(sec.index),
    })), symbols, k.arch.abi.pointerSize));
    k.notifyModule(name, 'coming');
    this.hooks.onChange?.();
    this.serialise(() => this.runInit(mod, done));
    return mod;
  }

  /**
   * Why a module cannot be unloaded now: rmmod's line and delete_module(2)'s
   * errno (Linux's checks, in its order): not loaded -ENOENT; used by another
   * module -EWOULDBLOCK (= -EAGAIN); init still running or already going
   * -EBUSY; an init without an exit -EBUSY. Undefined when it can be.
   */
  unloadRefusal(name: string): { errno: number; line: string } | undefined {
    const mod = this.mods.get(name);
    if (!mod) return { errno: Errno.ENOENT, line: `ERROR: Module ${name} is not currently loaded` };
    if (mod.usedBy.size) return { errno: Errno.EAGAIN, line: `ERROR: Module ${name} is in use by: ${[...mod.usedBy].map(m => m.name).join(' ')}` };
    if (mod.state === 'coming') return { errno: Errno.EBUSY, line: `ERROR: Module ${name} is in use (its init is still running)` };
    if (mod.state !== 'live') return { errno: Errno.EBUSY, line: `ERROR: Module ${name} is being removed` };
    if (mod.initFn !== undefined && mod.exitFn === undefined) return { errno: Errno.EBUSY, line: `ERROR: Module ${name} has no exit function and cannot be removed (Device or resource busy, err -16)` };
    return undefined;
  }

  /**
   * delete_module(2) from the image (the DeleteModule hypercall,
   * <linux/module.h>'s delete_module()): 0 once the unload is accepted, or
   * -errno as unloadRefusal says. The unload is rmmod's (`unload`): the exit
   * function runs in an "rmmod" kernel thread after any insmod / rmmod
   * work in progress (a caller that is itself a module's init has returned
   * by then), then the module is freed and probes on it become [GONE].
   * Linux runs the exit in the caller before returning; here the caller
   * never waits for it (as if O_NONBLOCK were honoured for the exit too).
   */
  deleteModule(name: string, done?: (err: string | null) => void): number {
    const r = this.unloadRefusal(name);
    if (r) return -r.errno;
    this.unload(name, done);
    return 0;
  }

  /** rmmod: run the exit function (in a kernel thread), then free the module; the error line when refused */
  unload(name: string, done?: (err: string | null) => void): string | undefined {
    const refused = this.unloadRefusal(name);
    if (refused) return refused.line;
    const mod = this.mods.get(name) as KernelModule;
    mod.state = 'going';
    this.kernel.setModuleBlacklist(name, null);
    this.kernel.notifyModule(name, 'going');
    this.hooks.onChange?.();
    this.serialise(() => {
      const finish = (): void => {
        this.free(mod, 'unload');
        this.next();
        done?.(null);
      };
      if (mod.exitFn === undefined) { finish(); return; }
      this.call(mod.exitFn, `rmmod`, () => finish());
    });
    return undefined;
  }

  private runInit(mod: KernelModule, done?: (err: string | null) => void): void {
    const finish = (rv: bigint): void => {
      const r = Number(BigInt.asIntN(32, rv));
      if (r < 0) {
        this.kernel.printk(-1, `${mod.name}: module init returned ${r}: not loaded`, 'kernel');
        this.free(mod, 'init failed');
        this.next();
        done?.(`${mod.name}: init returned ${r}`);
        return;
      }
      if (r > 0) this.kernel.printk(-1, `do_init_module: '${mod.name}'->init suspiciously returned ${r}, it should follow 0/-E convention`, 'kernel');
      mod.state = 'live';
      this.kernel.notifyModule(mod.name, 'live');
      this.freeInit(mod);
      this.hooks.onChange?.();
      this.next();
      done?.(null);
    };
    if (mod.initFn === undefined) { finish(0n); return; }
    this.call(mod.initFn, 'insmod', finish);
  }

  /** run a module function in a kernel thread on CPU 0; `then` gets its return value */
  private call(fn: bigint, comm: string, then: (rv: bigint) => void): void {
    const t = this.kernel.createKernelThread(fn, 0n, 0, comm);
    this.waiting.set(t.pid, then);
  }

  private serialise(work: () => void): void {
    if (this.busy) { this.queue.push(work); return; }
    this.busy = true;
    work();
  }

  private next(): void {
    const w = this.queue.shift();
    if (w) w();
    else this.busy = false;
  }

  /** free_initmem for a module: probes in its init code [GONE], the memory poisoned */
  private freeInit(mod: KernelModule): void {
    if (!mod.init || mod.initFreed) return;
    this.hooks.onFree?.(mod.init.lo, mod.init.hi, mod, 'init');
    this.poison(mod.init, mod.name, 'its init memory was freed');
    this.kallsyms.remove(mod.name, mod.init);
    this.lines.remove(mod.name, mod.init);
    mod.initFreed = true;
  }

  private free(mod: KernelModule, why: string): void {
    this.freeInit(mod);
    this.hooks.onFree?.(mod.core.lo, mod.core.hi, mod, 'unload');
    this.poison(mod.core, mod.name, why === 'unload' ? 'unloaded' : why);
    this.kallsyms.remove(mod.name);
    this.lines.remove(mod.name);
    for (const u of mod.uses) u.usedBy.delete(mod);
    mod.state = 'unloaded';
    this.kernel.setModuleBlacklist(mod.name, null);
    this.mods.delete(mod.name);
    this.hooks.onChange?.();
  }

  /** free a module area: unmapped (a later access is a page fault the trap hook names) */
  private poison(a: ModuleArea, module: string, why: string): void {
    const r = this.kernel.mem.regionAt(mustVAddr(a.lo));
    if (r) {
      this.kernel.mem.notifyCodeWrite(r.base, r.size);
      this.kernel.mem.unmap(r);
    }
    this.freed.push({ lo: a.lo, hi: a.hi, module, why });
  }

  /**
   * module_alloc: a fresh area for a module part, within the code model's
   * reach of the kernel text: after the exec area when there is room, else
   * below it. Mapped read-write-execute (Linux makes text read-only and data
   * non-executable once relocated; not modelled). Areas are never reused.
   */
  private mapArea(size: number, name: string): Region {
    const mem = this.kernel.mem;
    const lay = this.kernel.layout;
    const pages = Math.ceil(size / PAGE_SIZE) * PAGE_SIZE;
    const execLo = mustVAddr(lay.execArea), execHi = execLo + lay.execAreaSize;
    const free = (a: number): boolean => Number.isSafeInteger(a) && !mem.allRegions().some(r => a < r.end && r.base < a + pages);
    if (this.cursorUp === null) this.cursorUp = execHi;
    if (this.cursorDown === null) this.cursorDown = execLo;
    // the module area: within 1 GiB of the exec area, either side (every code model here reaches it); a part
    // that does not fit wholly is refused before anything is allocated, as Linux's module_alloc fails
    const limit = MODULE_AREA;
    let base: number | null = null;
    for (let a = this.cursorUp; a + pages - execHi <= limit; a += PAGE_SIZE) if (free(a)) { base = a; this.cursorUp = a + pages; break; }
    if (base === null) {
      for (let a = this.cursorDown - pages; execLo - a <= limit; a -= PAGE_SIZE) if (free(a)) { base = a; this.cursorDown = a; break; }
    }
    if (base === null) throw new RangeError(`no free ${pages} bytes within reach of the kernel text`);
    return mem.map(base, pages, PERM_R | PERM_W | PERM_X, `module ${name}`);
  }
  private cursorUp: number | null = null;
  private cursorDown: number | null = null;

  /** the kernel's param_ops_<type> objects module_param() entries point to (params.ts) */
  private readonly paramOps: ParamOpsTable;

  /**
   * parse_args over the module's __param table (params.ts): each given
   * parameter written into its variable, Linux's lines in the kernel log;
   * the ModuleError of the first that fails (nothing loaded). charp
   * strings are copied into a small area of their own.
   */
  private setParams(mod: string, obj: RelObject, addrOf: ReadonlyMap<number, bigint>, params: readonly ModuleParam[]): ModuleError | undefined {
    if (!params.length) return undefined;
    const sec = obj.sections.find(s => s.name === '__param');
    const base = sec ? addrOf.get(sec.index) : undefined;
    const mem = this.kernel.mem;
    const linuxLayout = obj.symbols.some(s => s.shndx === SHN_UNDEF && s.name.startsWith('param_ops_'));
    const entries = sec && base !== undefined ? readParamTable(mem, this.paramOps, base, Number(sec.size), !linuxLayout) : [];
    const failed = parseArgs(mod, entries, params, {
      mem,
      printk: line => this.kernel.printk(-1, line, 'kernel'),
      alloc: size => fromVAddr(this.mapArea(size, `${mod} (param)`).base),
    });
    if (!failed) return undefined;
    const why = failed.errno === Errno.ENOSPC ? 'No space left on device' : failed.errno === Errno.ERANGE ? 'Numerical result out of range' : 'Invalid argument';
    return new ModuleError(`${failed.lines[failed.lines.length - 1]} (${why}, err -${failed.errno})`, true);
  }

  /** simplify_symbols: a symbol's final value */
  private symbolValue(mod: string, obj: RelObject, s: ObjSymbol, addrOf: ReadonlyMap<number, bigint>, uses: Set<KernelModule>, gplOk: boolean): bigint {
    if (s.index === 0) return 0n;
    if (s.shndx === SHN_COMMON) throw new ModuleError(`${mod}: please compile with -fno-common (symbol ${s.name} is COMMON) (err -8)`);
    if (s.shndx === SHN_ABS) return s.value;
    if (s.shndx === SHN_UNDEF) {
      const v = this.resolveExport(s.name, uses, gplOk);
      if (v !== undefined) return v;
      if (s.bind === STB_WEAK) return 0n;
      throw new ModuleError(`${mod}: Unknown symbol ${s.name} (err -2)`);
    }
    const base = addrOf.get(s.shndx);
    // a symbol of a section not loaded (debug info, arm64 mapping symbols there): its offset in that section
    if (base === undefined) return s.value;
    return base + s.value;
  }

  /**
   * find_symbol: the kernel's param_ops_<type> objects (module_param),
   * live modules' globals, the kernel's own functions (kprobes API), then the image's exports: its __ksymtab (EXPORT_SYMBOL) and, for a
   * module with a GPL-compatible license, __ksymtab_gpl (EXPORT_SYMBOL_GPL);
   * any other global of such an image is not found ("Unknown symbol").
   * An image without __ksymtab exports all its global functions and objects
   * (images written before exports, or without kernel.h's macros).
   */
  private resolveExport(name: string, uses: Set<KernelModule>, gplOk: boolean): bigint | undefined {
    const ops = this.paramOps.symbol(name);
    if (ops !== undefined) return ops;
    for (const m of this.mods.values()) {
      if (m.state === 'unloaded' || m.state === 'going') continue;
      const s = m.symbols.find(x => x.name === name && x.bind === 'global');
      if (s) { uses.add(m); return s.value; }
    }
    const f = this.hooks.kernelFunction?.(name);
    if (f !== undefined) return f;
    if (this.exports) {
      const e = this.exports.get(name);
      return e && (gplOk || !e.gplOnly) ? e.value : undefined;
    }
    const s = this.kallsyms.base.lookup(name);
    if (s && s.bind !== 'local' && (s.type === 'func' || s.type === 'object' || s.type === 'notype') && toVAddr(s.value) !== null) return s.value;
    return undefined;
  }
}

/** fn's value, computed on the first call */
function lazy<T>(fn: () => T): () => T {
  let done = false;
  let v: T;
  return () => {
    if (!done) { v = fn(); done = true; }
    return v;
  };
}
