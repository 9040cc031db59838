/**
 * A small full-system x86_64 machine for the CPU's system half: physical
 * RAM, 4-level page tables built on demand, a GDT laid out as Linux's
 * (0x10 kernel code, 0x18 kernel data, 0x23 user 32-bit code, 0x2b user
 * data, 0x33 user code, 0x40 the TSS), an IDT, a TSS, and a platform whose
 * ports, interrupt line, MSRs and clock the test drives.
 */
import { Memory, PERM_R, PERM_W, PERM_X } from '../../../emulator/memory/memory';
import { createSystemCpu, runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';
import type { X86Cpu } from '../../../emulator/arch/x86_64/cpu';
import type { SystemState, X86Platform } from '../../../emulator/arch/x86_64/sysmode/state';
import type { PagedMemory } from '../../../emulator/arch/x86_64/sysmode/paging';
import { hexBytes } from '../../fixtures/x86/harness';

export { hexBytes };
export const RAM = 16 << 20;
export const PML4 = 0x1000, GDT = 0x8000, IDT = 0x9000, TSS = 0xa000;
/** supervisor code and stacks (identity-mapped, supervisor pages) */
export const KCODE = 0x10000, KSTACK = 0x20000, ISTSTACK = 0x30000, KDATA = 0x40000;
/** user code, data and stack (user pages) */
export const UCODE = 0x400000, USTACK = 0x500000, UDATA = 0x480000;
/** PTE bits */
export const P = 1n, RW = 2n, US = 4n, PWT = 8n, A = 0x20n, D = 0x40n, PS = 0x80n, G = 0x100n, NX = 1n << 63n;
export const KERNEL_CS = 0x10, KERNEL_DS = 0x18, USER32_CS = 0x23, USER_DS = 0x2b, USER_CS = 0x33, TSS_SEL = 0x40;

/** A platform the test drives: port values, a queue of interrupt vectors, MSRs, a clock it sets. */
export class TestPlatform implements X86Platform {
  readonly portValues = new Map<number, number>();
  readonly outs: [number, number, number][] = [];
  readonly pending: number[] = [];
  readonly acked: number[] = [];
  nmi = false;
  readonly platformMsrs = new Map<number, bigint>();
  ns = 0n;
  readonly io = {
    in: (port: number, size: 1 | 2 | 4): number => this.portValues.get(port) ?? (size === 1 ? 0xff : size === 2 ? 0xffff : 0xffffffff),
    out: (port: number, size: 1 | 2 | 4, value: number): void => { this.outs.push([port, size, value]); },
  };
  readonly irq = {
    pendingVector: (): number => this.pending.length > 0 ? this.pending[0] : -1,
    acknowledge: (v: number): void => { this.pending.shift(); this.acked.push(v); },
    /** an NMI is an edge: taken once when the CPU looks */
    nmiPending: (): boolean => { const n = this.nmi; this.nmi = false; return n; },
  };
  readonly msrs = {
    rdmsr: (_cpu: number, msr: number): bigint | undefined => this.platformMsrs.get(msr),
    wrmsr: (_cpu: number, msr: number, v: bigint): boolean => {
      if (!this.platformMsrs.has(msr)) return false;
      this.platformMsrs.set(msr, v);
      return true;
    },
  };
  readonly clock = { nowNs: (): bigint => this.ns, tscHz: 2_000_000_000n };
  /** the block translator's mode (undefined: the process default, KPROBE_TRANSLATE) */
  constructor(readonly translate?: 'on' | 'off' | 'lockstep') {}
}

export class SysMachine {
  readonly phys = new Memory('physical');
  readonly platform: TestPlatform;
  readonly cpu: X86Cpu;
  readonly sys: SystemState;
  readonly mem: PagedMemory;
  /** next free page-table page */
  private nextTable = 0x100000;

  constructor(translate?: 'on' | 'off' | 'lockstep') {
    this.platform = new TestPlatform(translate);
    this.phys.map(0, RAM, PERM_R | PERM_W | PERM_X, 'ram');
    // GDT: null, -, kernel code64, kernel data, user code32, user data, user code64, -, TSS (16 bytes)
    const gdt = [0n, 0n, 0x00af9a000000ffffn, 0x00cf92000000ffffn, 0x00cffa000000ffffn, 0x00cff2000000ffffn, 0x00affa000000ffffn, 0n];
    gdt.forEach((d, k) => this.phys64(GDT + 8 * k, d));
    const tssLimit = 0x67 + 0x2001; // with an I/O bitmap for ports 0..0xffff and its terminating byte
    this.phys64(GDT + 0x40, BigInt(tssLimit & 0xffff) | (BigInt(TSS & 0xffffff) << 16n) | (0x89n << 40n) | (BigInt((TSS >>> 24) & 0xff) << 56n));
    this.phys64(GDT + 0x48, 0n);
    this.phys64(TSS + 4, BigInt(KSTACK)); // RSP0
    this.phys64(TSS + 0x24, BigInt(ISTSTACK)); // IST1
    this.phys.writeBytes(TSS + 0x66, new Uint8Array([0x68, 0]));
    this.phys.writeBytes(TSS + 0x68, new Uint8Array(0x2001).fill(0xff)); // every port denied at CPL 3
    // identity map of the first 2 MiB in 4 KiB supervisor pages, user code/data/stack pages
    for (let a = 0; a < 0x200000; a += 0x1000) this.map(BigInt(a), BigInt(a), P | RW);
    for (const a of [UCODE, UDATA, USTACK - 0x1000]) this.map(BigInt(a), BigInt(a), P | RW | US);
    this.cpu = createSystemCpu(0, this.phys, this.platform, { rip: BigInt(KCODE), cr3: BigInt(PML4), gdtBase: BigInt(GDT), gdtLimit: 0x4f });
    this.sys = this.cpu.sys as SystemState;
    this.mem = this.sys.mem;
    this.sys.idtBase = IDT;
    this.sys.idtLimit = 256 * 16 - 1;
    this.sys.trBase = TSS;
    this.sys.trLimit = tssLimit;
    this.sys.tr = TSS_SEL;
    this.setReg(4, BigInt(KSTACK));
  }

  phys64(a: number, v: bigint): void {
    const b = new Uint8Array(8);
    new DataView(b.buffer).setBigUint64(0, BigInt.asUintN(64, v), true);
    this.phys.writeBytes(a, b);
  }
  read64(a: number): bigint { return new DataView(this.phys.readBytes(a, 8).buffer).getBigUint64(0, true); }

  private newTable(): number {
    const t = this.nextTable;
    this.nextTable += 0x1000;
    this.phys.writeBytes(t, new Uint8Array(0x1000));
    return t;
  }

  /** the physical address of the entry for `va` at `level` (4 PML4 .. 1 PT), creating tables above it (P RW US) */
  entry(va: bigint, level: number): number {
    const la = BigInt.asUintN(48, va);
    let table = PML4;
    for (let l = 4; l > level; l--) {
      const e = table + Number((la >> BigInt(12 + 9 * (l - 1))) & 511n) * 8;
      let v = this.read64(e);
      if ((v & P) === 0n) { v = BigInt(this.newTable()) | P | RW | US; this.phys64(e, v); }
      table = Number(v & 0xffffffffff000n);
    }
    return table + Number((la >> BigInt(12 + 9 * (level - 1))) & 511n) * 8;
  }
  /** map the 4 KiB page at va to pa with the leaf's flags */
  map(va: bigint, pa: bigint, flags: bigint): void { this.phys64(this.entry(va, 1), pa | flags); }
  /** a 2 MiB (level 2) or 1 GiB (level 3) page */
  mapLarge(va: bigint, pa: bigint, flags: bigint, level: 2 | 3): void { this.phys64(this.entry(va, level), pa | flags | PS); }

  /** an interrupt (type 0xe) or trap (0xf) gate */
  gate(vector: number, handler: number, o: { type?: number; dpl?: number; ist?: number; present?: boolean; sel?: number } = {}): void {
    const h = BigInt(handler);
    const attr = BigInt((o.present === false ? 0 : 0x80) | ((o.dpl ?? 0) << 5) | (o.type ?? 0xe));
    const lo = (h & 0xffffn) | (BigInt(o.sel ?? KERNEL_CS) << 16n) | (BigInt(o.ist ?? 0) << 32n) | (attr << 40n) | (((h >> 16n) & 0xffffn) << 48n);
    this.phys64(IDT + vector * 16, lo);
    this.phys64(IDT + vector * 16 + 8, (h >> 32n) & 0xffffffffn);
  }

  /** bytes at a physical address */
  code(pa: number, hex: string): void { this.phys.writeBytes(pa, hexBytes(hex)); }

  setReg(r: number, v: bigint): void {
    const u = BigInt.asUintN(64, v);
    this.cpu.lo[r] = Number(u & 0xffffffffn) | 0;
    this.cpu.hi[r] = Number(u >> 32n) | 0;
  }
  reg(r: number): bigint { return (BigInt(this.cpu.hi[r] >>> 0) << 32n) | BigInt(this.cpu.lo[r] >>> 0); }
  /** start at CPL 3 at `rip` with the user stack */
  toUser(rip: number): void {
    this.sys.cs = USER_CS; this.sys.ss = USER_DS;
    this.cpu.userMode = true; this.mem.userMode = true;
    this.cpu.setPc(BigInt(rip));
    this.setReg(4, BigInt(USTACK));
  }
}

export const RAX = 0, RCX = 1, RDX = 2, RBX = 3, RSP = 4, RSI = 6, RDI = 7, R11 = 11;

/** the handlers installHandlers puts in place: vector v's is a hlt at HANDLERS + 16 v */
export const HANDLERS = 0x18000;
const WITH_CODE = new Set([8, 10, 11, 12, 13, 14, 17]);

/** an interrupt gate for each of the 32 exception vectors, to a handler that halts */
export function installHandlers(m: SysMachine): void {
  for (let v = 0; v < 32; v++) {
    m.gate(v, HANDLERS + 16 * v, v === 8 ? { ist: 1 } : {});
    m.code(HANDLERS + 16 * v, 'f4');
  }
}

export interface Delivered { vector: number; errorCode?: number; rip: bigint; cs: number; rflags: number; rsp: bigint; ss: number }

/** run until the CPU halts; the exception handler it halted in and the frame delivery pushed */
export function runToHandler(m: SysMachine, budget = 1000): Delivered {
  const r = runSystemCpu(m.cpu, budget);
  if (r.event) throw new Error(`machine event: ${r.event.detail}`);
  if (!r.halted) throw new Error(`did not halt (rip 0x${m.cpu.getPc().toString(16)})`);
  const at = Number(m.cpu.getPc()) - 1 - HANDLERS;
  if (at < 0 || at % 16 !== 0 || at / 16 >= 32) throw new Error(`halted outside the handlers, at 0x${m.cpu.getPc().toString(16)}`);
  const vector = at / 16;
  let sp = Number(m.reg(RSP));
  const pop = (): bigint => { const v = new DataView(m.mem.readBytes(sp, 8).buffer).getBigUint64(0, true); sp += 8; return v; };
  const errorCode = WITH_CODE.has(vector) ? Number(pop()) : undefined;
  return { vector, errorCode, rip: pop(), cs: Number(pop()), rflags: Number(pop()), rsp: pop(), ss: Number(pop()) };
}
