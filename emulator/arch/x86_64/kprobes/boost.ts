/**
 * x86_64 can_boost(): may a copy of this instruction run out of line with
 * a jump back appended, instead of being single-stepped (the kprobe
 * booster), and may it be copied into an optprobe detour buffer (every
 * instruction of the detoured region must pass the same test, as in
 * Linux's copy_optimized_instructions)?
 *
 * The rule (the 2006 booster paper, Linux arch/x86/kernel/kprobes/core.c):
 *   - instructions whose effect depends on where they execute are not
 *     boostable: relative jumps, conditional jumps, loop/jrcxz, relative
 *     and indirect calls (the pushed return address would be the copy's),
 *     software interrupts / traps (int3, int n, ud2, syscall, vmcall) and
 *     hlt;
 *   - instructions with hardware side effects are not boostable
 *     (cpuid, rdmsr/wrmsr, rdpmc, port I/O, descriptor-table and control
 *     register loads, cache invalidation, swapgs, xsetbv);
 *   - the CS-override prefix (0x2e, also the "branch not taken" hint) and
 *     the address-size prefix (0x67) make an instruction not boostable, as
 *     in Linux;
 *   - returns are not boostable: the project's issue lists them with the
 *     instructions that depend on the execution address (2.6-era Linux did
 *     boost ret, since its target is absolute; we follow the issue);
 *   - everything else is boostable, including indirect jmp (absolute
 *     target: the copy goes to the right place without any fix-up) and
 *     RIP-relative operands (the slot copy has its displacement
 *     re-targeted).
 * An instruction listed in the image's exception table is never boosted
 * (checked by the caller, which knows the address): a fault in the copy
 * would not be found in __ex_table.
 *
 * Decisions are made from the DecodedInsn (flow, mnemonic) plus the
 * prefix and opcode bytes where the decoder found them (InsnLayout).
 */
import type { DecodedInsn } from '../../types';
import { mustVAddr } from '../../../memory/address';
import { decodeBytes } from '../decoder';
import { CheckedInsn } from '../disasm';

/** Mnemonics with hardware side effects (never boosted nor detoured). */
const SIDE_EFFECT_MNEMONICS = new Set([
  'cpuid', 'rdmsr', 'wrmsr', 'rdpmc', 'rdtscp', 'in', 'out', 'ins', 'outs', 'insb', 'insw', 'insd', 'outsb', 'outsw', 'outsd',
  'lgdt', 'lidt', 'lldt', 'ltr', 'lmsw', 'invlpg', 'invd', 'wbinvd', 'swapgs', 'xsetbv', 'clts', 'rsm', 'hlt',
  'int1', 'int3', 'int', 'into', 'iret', 'iretq', 'iretd', 'sysret', 'sysretq', 'sysenter', 'sysexit', 'syscall', 'vmcall', 'ud2',
]);

/** Flow classes that depend on the execution address (or trap). */
const IP_DEPENDENT_FLOWS = new Set<DecodedInsn['flow']>(['jump', 'condJump', 'call', 'indirectCall', 'trap', 'halt']);

/** One-byte opcodes never boostable, by byte (for encodings the decoder may not name). */
function oneByteNotBoostable(op: number): boolean {
  if (op >= 0x70 && op <= 0x7f) return true; // jcc rel8
  if (op >= 0xe0 && op <= 0xe3) return true; // loop*, jrcxz
  if (op >= 0xe4 && op <= 0xe7) return true; // in/out imm8
  if (op >= 0xec && op <= 0xef) return true; // in/out dx
  if (op === 0x6c || op === 0x6d || op === 0x6e || op === 0x6f) return true; // ins/outs
  switch (op) {
    case 0x9a: case 0xea: // far call/jmp (invalid in 64-bit mode)
    case 0xcc: case 0xcd: case 0xce: case 0xcf: // int3, int n, into, iret
    case 0xe8: case 0xe9: case 0xeb: // call/jmp rel
    case 0xf1: case 0xf4: // int1, hlt
    case 0xd6: // undefined
      return true;
    default:
      return false;
  }
}

/** Two-byte (0f xx) opcodes never boostable. */
function twoByteNotBoostable(op2: number, modrm: number): boolean {
  if (op2 >= 0x80 && op2 <= 0x8f) return true; // jcc rel32
  if (op2 >= 0x20 && op2 <= 0x23) return true; // mov to/from cr/dr
  switch (op2) {
    case 0x00: case 0x01: // descriptor tables, swapgs, rdtscp, vmcall, xsetbv...
    case 0x05: case 0x06: case 0x07: // syscall, clts, sysret
    case 0x08: case 0x09: // invd, wbinvd
    case 0x0b: // ud2
    case 0x30: case 0x32: case 0x33: // wrmsr, rdmsr, rdpmc
    case 0x34: case 0x35: // sysenter, sysexit
    case 0xa2: // cpuid
    case 0xaa: // rsm
      return true;
    case 0xae: // fences (mod = 3) are fine; fxsave/xsave/... memory forms are not
      return (modrm & 0xc0) !== 0xc0;
    default:
      return false;
  }
}

export type BoostVerdict = { boostable: true } | { boostable: false; reason: string };

/**
 * can_boost with the reason when not (used by tests, the optimizer's
 * diagnostics). `purpose` 'relocate' is the optimizer's question (may the
 * instruction be copied into a detour buffer?): there a return is fine, its
 * target is on the stack; 'boost' follows the issue and refuses returns.
 */
export function boostVerdict(insn: DecodedInsn, purpose: 'boost' | 'relocate' = 'boost'): BoostVerdict {
  if (IP_DEPENDENT_FLOWS.has(insn.flow)) return no(`${insn.mnemonic}: ${insn.flow} depends on the execution address`);
  if (purpose === 'boost' && insn.flow === 'ret') return no(`${insn.mnemonic}: a return is not boosted`);
  if (SIDE_EFFECT_MNEMONICS.has(insn.mnemonic)) return no(`${insn.mnemonic}: hardware side effect`);
  // the decoder's field offsets: prefixes before the opcode, the opcode bytes, ModRM (a checked instruction has them)
  const x = insn instanceof CheckedInsn ? insn.raw : decodeBytes(insn.bytes, mustVAddr(insn.addr));
  if (!x) return no(`${insn.mnemonic}: the bytes do not decode`);
  const b = x.bytes;
  const l = x.layout;
  for (let k = 0; k < l.prefixLen; k++) {
    if (b[k] === 0x2e) return no(`${insn.mnemonic}: CS-override prefix`);
    if (b[k] === 0x67) return no(`${insn.mnemonic}: address-size prefix`);
  }
  if (l.vexOff >= 0) return BOOSTABLE; // VEX (BMI): plain register/memory arithmetic
  const op = b[l.opcodeOff];
  const modrm = l.modrmOff >= 0 ? b[l.modrmOff] : 0;
  if (op === 0x0f) {
    const op2 = b[l.opcodeOff + 1];
    if (twoByteNotBoostable(op2, modrm)) return no(`${insn.mnemonic}: opcode 0f ${op2.toString(16).padStart(2, '0')}`);
  } else if (op === 0xff) {
    const reg = (modrm >> 3) & 7;
    if (reg === 2 || reg === 3 || reg === 5) return no(`${insn.mnemonic}: indirect call / far jump`);
  } else if (oneByteNotBoostable(op)) {
    return no(`${insn.mnemonic}: opcode ${op.toString(16).padStart(2, '0')}`);
  }
  return BOOSTABLE;
}

/** the verdict of every boostable instruction (one object: nothing writes a verdict) */
const BOOSTABLE: BoostVerdict = Object.freeze({ boostable: true });

function no(reason: string): BoostVerdict {
  return { boostable: false, reason };
}

/** can_boost(insn) */
export function canBoost(insn: DecodedInsn): boolean {
  return boostVerdict(insn).boostable;
}
