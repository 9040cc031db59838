/**
 * ABI facts by ELF architecture name, in pt_regs field names: plain `char`
 * signedness, integer argument registers, return-value register, program
 * counter and stack pointer, and whether Linux can jump-optimize kprobes
 * there (HAVE_OPTPROBES).
 *
 * The handler language and the language server need these facts for images
 * whose CPU is not emulated (to check a probe file written for a ppc64
 * kernel, say). Where an arch has a port (emulator/ports.ts), the port's info
 * part is the authority: abiFactsFor() derives the facts from its regs, abi
 * and optprobes; the static table below holds only architectures without a
 * port. Nothing here loads a CPU.
 *
 * Register names follow each arch's struct pt_regs (Linux
 * arch/<arch>/include/asm/ptrace.h): x86 drops the `r`/`e` prefix
 * (ip, sp, ax...), arm64 names x0..x30, sp, pc, pstate; riscv names its
 * fields after the ABI register names with epc as the pc; 32-bit arm
 * uses r0..r10, fp, ip, sp, lr, pc, cpsr.
 */
import { PORTS, portByName } from '../ports';
import type { ArchInfo } from './types';

export interface AbiFacts {
  /** canonical ELF arch name (elf/machines.ts spelling) */
  readonly arch: string;
  /** whether plain `char` is signed */
  readonly charSigned: boolean;
  /** pt_regs names of the integer argument registers, in ABI order */
  readonly argRegs: readonly string[];
  /** pt_regs name of the integer return-value register */
  readonly retReg: string;
  /** pt_regs name of the program counter (what a pre_handler assigns to change the path) */
  readonly pcReg: string;
  /** pt_regs name of the stack pointer */
  readonly spReg: string;
  /** Linux can jump-optimize kprobes on this arch (HAVE_OPTPROBES) */
  readonly optprobes: boolean;
  /** 'archOps': facts taken from the arch's port (its ArchInfo, which ArchOps extends); 'table': the static table below */
  readonly source: 'archOps' | 'table';
}

type StaticFacts = Omit<AbiFacts, 'arch' | 'source'>;

const RISCV_ARGS = ['a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7'];

/**
 * Static facts by ELF arch name, for architectures without a port. i386
 * kernels are built with -mregparm=3 (arguments in ax, dx, cx); the others
 * follow their psABI.
 */
const TABLE: Readonly<Record<string, StaticFacts>> = {
  i386: { charSigned: true, argRegs: ['ax', 'dx', 'cx'], retReg: 'ax', pcReg: 'ip', spReg: 'sp', optprobes: true },
  arm: { charSigned: false, argRegs: ['r0', 'r1', 'r2', 'r3'], retReg: 'r0', pcReg: 'pc', spReg: 'sp', optprobes: true },
  riscv32: { charSigned: false, argRegs: RISCV_ARGS, retReg: 'a0', pcReg: 'epc', spReg: 'sp', optprobes: false },
  ppc: { charSigned: false, argRegs: ['gpr[3]', 'gpr[4]', 'gpr[5]', 'gpr[6]', 'gpr[7]', 'gpr[8]', 'gpr[9]', 'gpr[10]'], retReg: 'gpr[3]', pcReg: 'nip', spReg: 'gpr[1]', optprobes: true },
  ppc64: { charSigned: false, argRegs: ['gpr[3]', 'gpr[4]', 'gpr[5]', 'gpr[6]', 'gpr[7]', 'gpr[8]', 'gpr[9]', 'gpr[10]'], retReg: 'gpr[3]', pcReg: 'nip', spReg: 'gpr[1]', optprobes: true },
  s390x: { charSigned: false, argRegs: ['gprs[2]', 'gprs[3]', 'gprs[4]', 'gprs[5]', 'gprs[6]'], retReg: 'gprs[2]', pcReg: 'psw.addr', spReg: 'gprs[15]', optprobes: false },
};

/** Other spellings of the table's arch names (a port's own aliases are in its info part). */
const ALIASES: Readonly<Record<string, string>> = {
  x86: 'i386', i486: 'i386', i586: 'i386', i686: 'i386', ia32: 'i386',
  armv7: 'arm', armhf: 'arm', armel: 'arm',
  powerpc: 'ppc', powerpc64: 'ppc64', ppc64le: 'ppc64', s390: 's390x',
};

/** Canonical ELF arch name of a spelling ('amd64' -> 'x86_64'); lower-cased input otherwise. */
export function canonicalArchName(name: string): string {
  const n = name.trim().toLowerCase();
  return portByName(n)?.name ?? ALIASES[n] ?? n;
}

/** Arch names the static table knows. */
export function abiFactsArches(): string[] {
  return Object.keys(TABLE);
}

/** The static table's entry for an arch (ignoring any ArchOps), undefined when not listed. */
export function staticAbiFacts(archName: string): AbiFacts | undefined {
  const arch = canonicalArchName(archName);
  const t = TABLE[arch];
  return t ? { arch, ...t, source: 'table' } : undefined;
}

/** Facts of a ported arch, read from its info part (an ArchOps is one too). */
export function abiFactsFromArchOps(ops: ArchInfo): AbiFacts {
  const name = (i: number): string => {
    const r = ops.regs[i];
    if (!r) throw new Error(`${ops.name}: ABI register index ${i} is not in the register table`);
    return r.name;
  };
  return {
    arch: ops.name,
    charSigned: ops.abi.charSigned,
    argRegs: ops.abi.argRegs.map(name),
    retReg: name(ops.abi.retReg),
    pcReg: name(ops.abi.pcReg),
    spReg: name(ops.abi.spReg),
    optprobes: ops.optprobes,
    source: 'archOps',
  };
}

/**
 * ABI facts of an architecture by ELF name (or a common alias): from its
 * port when there is one, else from the static table; undefined for an arch
 * neither knows.
 */
export function abiFactsFor(archName: string): AbiFacts | undefined {
  const arch = canonicalArchName(archName);
  const port = portByName(arch);
  return port ? abiFactsFromArchOps(port) : staticAbiFacts(arch);
}

/**
 * The arch whose pt_regs names these are, for callers that know the
 * register names but not the arch: the first arch (ports first, then the
 * table's order) whose argument, return, pc and sp registers are all among
 * regNames.
 */
export function abiFactsForRegs(regNames: readonly string[]): AbiFacts | undefined {
  const has = (f: AbiFacts): boolean => [...f.argRegs, f.retReg, f.pcReg, f.spReg].every(n => regNames.includes(n));
  for (const arch of [...PORTS.map(p => p.name), ...Object.keys(TABLE)]) {
    const f = abiFactsFor(arch);
    if (f && has(f)) return f;
  }
  return undefined;
}
