/**
 * Module debug information on the Linux machine: the launch's `modules`
 * (Kbuild-built .ko files with their DWARF, the same files the guest
 * inserts: by its init script or an insmod typed in the Debug Console)
 * matched by name with the guest's module list (emulator/system/guest/
 * modules.ts: each section's load address from `mod->sect_attrs`, the
 * core and init areas). Each matched module's .debug_* sections are
 * relocated as the guest placed it (its symbols at their sections' load
 * addresses, the module loader's own relocation code: emulator/kernel/
 * modules/moduleLines.ts), so that
 *  - a source line of the module's C file has its addresses in the guest
 *    (source breakpoints in module code, live while the module is);
 *  - an address in module code has its line, its function's name (the
 *    .ko's symbols) and its DWARF scopes (frames, inlined calls,
 *    parameters and locals);
 *  - the call stack walks through module code with the module's own ORC
 *    tables, read from guest memory where the guest's loader put them
 *    (already relocated and sorted by the guest, as unwind_module_init
 *    leaves them).
 * The guest's list is read again once the machine ran since the last look.
 */
import { readFileSync } from 'node:fs';
import { moduleName, parseRelObject, SHF_ALLOC, SHN_ABS, SHN_UNDEF, type RelObject } from '../kernel/modules/object';
import { moduleDebugImage, moduleLineTable } from '../kernel/modules/moduleLines';
import { moduleRelocsFor } from '../arch/registry';
import type { ElfImage, ElfSection, LineTable } from '../elf/types';
import { readModules, type GuestModule } from '../system/guest/modules';
import type { GuestKernel } from '../system/guest/guestKernel';
import { orcFrames, type LinuxFrame } from './linuxOrc';
import { globalVariable, type FrameVariable, type MemReader } from './variables';

const STT_FUNC = 2;

/** launch.json "modules" of the Linux machine: .ko paths (checked: an array of non-empty strings) */
export function linuxModulePaths(raw: unknown, hasVmlinux: boolean): string[] {
  if (raw === undefined) return [];
  if (!Array.isArray(raw) || raw.some(p => typeof p !== 'string' || p.length === 0)) {
    throw new Error('launch: "modules" must be an array of .ko file paths (Kbuild-built modules with their debug information)');
  }
  if (raw.length > 0 && !hasVmlinux) throw new Error('launch: "modules" are read with the kernel\'s DWARF types and symbols: set "vmlinux" too');
  return raw as string[];
}

interface Placed {
  readonly name: string;
  /** the guest's struct module and its sections: a module inserted again is placed again */
  readonly key: string;
  readonly ranges: readonly { lo: bigint; hi: bigint }[];
  readonly lines: LineTable | null;
  readonly functions: readonly { name: string; value: bigint; size: bigint }[];
  image(): ElfImage | undefined;
  orc(): ElfImage | undefined;
}

export class LinuxModuleDebug {
  private readonly objs: { path: string; name: string; obj: RelObject }[] = [];
  private placed: Placed[] = [];
  private stamp = -1;
  /** counts the changes of which modules are placed where */
  generation = 0;

  constructor(paths: readonly string[], private readonly vmlinux: ElfImage) {
    for (const p of paths) {
      let obj: RelObject;
      try { obj = parseRelObject(new Uint8Array(readFileSync(p)), p); } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        throw new Error(`launch: "modules" ${p}: ${code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
      }
      if (!obj.sections.some(s => s.name === '.debug_info')) throw new Error(`launch: "modules" ${p}: no debug information (.debug_info): build the module with the kernel's CONFIG_DEBUG_INFO`);
      this.objs.push({ path: p, name: moduleName(obj, p), obj });
    }
  }

  get names(): string[] { return this.objs.map(o => o.name); }

  /** match the .ko files with the guest's module list, unless nothing ran since `stamp` (the instruction count) */
  refresh(guest: GuestKernel | undefined, stamp: number): void {
    if (stamp === this.stamp || !guest || this.objs.length === 0) return;
    this.stamp = stamp;
    let mods: GuestModule[];
    try { mods = readModules(guest.memory(), guest.layout, guest.symbols); } catch { return; }
    const before = this.placed;
    this.placed = this.objs.flatMap(o => {
      const m = mods.find(x => x.name === o.name && (x.state === 'live' || x.state === 'coming') && x.sections.size > 0);
      if (!m) return [];
      const key = `${m.addr}:${m.init.size}:${[...m.sections].map(([n, a]) => `${n}=${a}`).join(',')}`;
      return [before.find(p => p.name === o.name && p.key === key) ?? this.place(o.obj, o.name, key, m, guest)];
    });
    if (this.placed.length !== before.length || this.placed.some((p, i) => p !== before[i])) this.generation++;
  }

  private place(obj: RelObject, name: string, key: string, m: GuestModule, guest: GuestKernel): Placed {
    const relocs = moduleRelocsFor('x86_64')!;
    const loadOf = (shndx: number): bigint | undefined => {
      const s: ElfSection | undefined = obj.sections[shndx];
      return s && (s.flags & SHF_ALLOC) !== 0n ? m.sections.get(s.name) : undefined;
    };
    const values = obj.symbols.map(s => {
      if (s.shndx === SHN_ABS) return s.value;
      if (s.shndx === SHN_UNDEF) return s.name ? this.vmlinux.symbols.lookup(s.name)?.value ?? 0n : 0n;
      const base = loadOf(s.shndx);
      return base === undefined ? s.value : base + s.value;
    });
    const ranges = [m.core, m.init].filter(l => l.size > 0).map(l => ({ lo: l.base, hi: l.base + BigInt(l.size) }));
    const functions = obj.symbols.filter(s => s.type === STT_FUNC && loadOf(s.shndx) !== undefined).map(s => ({ name: s.name, value: values[s.index], size: s.size }));
    let image: ElfImage | undefined | null = null, orc: ElfImage | undefined | null = null;
    return {
      name, key, ranges, functions,
      lines: moduleLineTable(obj, relocs, values),
      image: () => (image === null ? (image = moduleDebugImage(this.vmlinux, obj, relocs, values)) : image),
      orc: () => (orc === null ? (orc = this.orcImage(obj, m, guest)) : orc),
    };
  }

  /** the module's .orc_unwind_ip / .orc_unwind as the guest holds them (relocated and sorted by its loader) */
  private orcImage(obj: RelObject, m: GuestModule, guest: GuestKernel): ElfImage | undefined {
    const secs = new Map<string, ElfSection>();
    for (const n of ['.orc_unwind_ip', '.orc_unwind']) {
      const s = obj.sections.find(x => x.name === n);
      const at = m.sections.get(n);
      if (!s || at === undefined) return undefined;
      try { secs.set(n, { ...s, addr: at, data: guest.memory().bytes(at, s.data.length) }); } catch { return undefined; }
    }
    const image = Object.create(this.vmlinux) as ElfImage & { section(name: string): ElfSection | undefined };
    image.section = (name: string): ElfSection | undefined => secs.get(name);
    return image;
  }

  private covering(addr: bigint): Placed | undefined {
    return this.placed.find(p => p.ranges.some(r => addr >= r.lo && addr < r.hi));
  }

  /** the addresses of a line of a module's source (its DWARF names tried in order), or undefined when no module has code there */
  lineAddresses(candidates: readonly string[], line: number): { addresses: bigint[]; line: number } | undefined {
    for (const p of this.placed) {
      if (!p.lines) continue;
      const live = (a: bigint): boolean => p.ranges.some(r => a >= r.lo && a < r.hi);
      for (const name of candidates) {
        let at = line;
        let addrs = p.lines.addressesForLine(name, at).filter(live);
        if (addrs.length === 0) {
          const next = p.lines.nextLineWithCode(name, line);
          if (next === undefined) continue;
          at = next;
          addrs = p.lines.addressesForLine(name, at).filter(live);
        }
        if (addrs.length > 0) return { addresses: addrs, line: at };
      }
    }
    return undefined;
  }

  /** the source line of an address in module code */
  lineForAddress(addr: bigint): { file: string; line: number; column: number } | undefined {
    return this.covering(addr)?.lines?.lineForAddress(addr);
  }

  /** true when the address is in a matched module's code or data */
  has(addr: bigint): boolean { return this.covering(addr) !== undefined; }

  /** the module's DWARF (relocated) for an address in its code */
  debugImage(addr: bigint): ElfImage | undefined { return this.covering(addr)?.image(); }

  /**
   * A launch module's global or file-static variable by name (hover, watch):
   * first the module whose code `pc` is in, then the other placed modules;
   * its DW_OP_addr relocated to where the guest put the module's data, read
   * with `read` (through the stopped CPU's page tables).
   */
  global(name: string, pc: bigint, read: MemReader): FrameVariable | undefined {
    const here = this.covering(pc);
    for (const p of here ? [here, ...this.placed.filter(x => x !== here)] : this.placed) {
      const image = p.image();
      if (!image) continue;
      const v = globalVariable(image, name, read, p === here ? pc : undefined);
      if (v) return v;
    }
    return undefined;
  }

  /** function+0xoff [module] of an address in module code (the .ko's function symbols) */
  where(addr: bigint): string | undefined {
    const p = this.covering(addr);
    if (!p) return undefined;
    const f = p.functions.find(x => addr >= x.value && addr < x.value + (x.size > 0n ? x.size : 1n));
    if (!f) return `0x${addr.toString(16)} [${p.name}]`;
    return addr === f.value ? f.name : `${f.name}+0x${(addr - f.value).toString(16)}`;
  }

  /**
   * The call stack through the vmlinux's and the modules' ORC tables: each
   * walk goes on while its frames stay in its own image; a frame in the
   * other's code starts a walk with that image's tables.
   */
  frames(regs: { rip: bigint; rsp: bigint; rbp: bigint }, read64: (a: bigint) => bigint | undefined): LinuxFrame[] {
    const out: LinuxFrame[] = [];
    let r = regs;
    /** the frame that starts the next walk, as the previous walk found it (a return address, or an interrupted pc) */
    let carried: LinuxFrame | undefined;
    for (let hop = 0; hop < 16; hop++) {
      const mod = this.covering(r.rip);
      const image = mod ? mod.orc() : this.vmlinux;
      const walked = image ? orcFrames(image, r, read64) : [{ pc: r.rip, sp: r.rsp, bp: r.rbp, signal: true }];
      if (carried) walked[0] = { ...walked[0], signal: carried.signal };
      const away = image ? walked.findIndex((f, k) => k > 0 && this.covering(f.pc) !== mod) : -1;
      if (away < 0) { out.push(...walked); return out; }
      out.push(...walked.slice(0, away));
      carried = walked[away];
      r = { rip: carried.pc, rsp: carried.sp, rbp: carried.bp ?? r.rbp };
    }
    return out;
  }
}
