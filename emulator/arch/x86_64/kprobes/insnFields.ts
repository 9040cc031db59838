/**
 * Just enough x86_64 instruction-field parsing for kprobes (the kernel's
 * insn_get_* helpers): where the opcode starts after legacy/REX prefixes,
 * and where the disp32 of a RIP-relative ModRM operand lies, so the copy in
 * an instruction slot can be re-targeted (fix_riprel).
 */

const LEGACY_PREFIXES = new Set([0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65, 0x66, 0x67]);

export interface X86Fields {
  /** offset of the first opcode byte (after legacy prefixes and REX, or of the VEX/EVEX prefix) */
  opcodeOffset: number;
  /** first opcode byte after prefixes (0x0f for two-byte opcodes) */
  opcode: number;
  /** ModRM byte offset assuming the instruction has one */
  modrmOffset: number;
}

export function x86Fields(b: Uint8Array): X86Fields {
  let i = 0;
  while (i < b.length && LEGACY_PREFIXES.has(b[i])) i++;
  if (i < b.length && (b[i] & 0xf0) === 0x40) i++; // REX
  const opcodeOffset = i;
  const op = b[i] ?? 0;
  let modrm: number;
  if (op === 0xc5) modrm = i + 3; // VEX2: c5 xx opcode modrm
  else if (op === 0xc4) modrm = i + 4; // VEX3: c4 xx xx opcode modrm
  else if (op === 0x62) modrm = i + 5; // EVEX: 62 xx xx xx opcode modrm
  else if (op === 0x0f) {
    const op2 = b[i + 1] ?? 0;
    modrm = op2 === 0x38 || op2 === 0x3a ? i + 3 : i + 2;
  } else modrm = i + 1;
  return { opcodeOffset, opcode: op, modrmOffset: modrm };
}

/**
 * Offset of the disp32 of a RIP-relative operand (ModRM mod=00 rm=101), or
 * -1 when the instruction has none at the expected place.
 */
export function ripDispOffset(b: Uint8Array): number {
  const f = x86Fields(b);
  const m = b[f.modrmOffset];
  if (m === undefined || (m & 0xc7) !== 0x05) return -1;
  if (f.modrmOffset + 5 > b.length) return -1;
  return f.modrmOffset + 1;
}

/** The ModRM.reg field of a one-byte-opcode instruction (group opcodes like ff /2). */
export function modrmReg(b: Uint8Array): number {
  const f = x86Fields(b);
  return ((b[f.modrmOffset] ?? 0) >> 3) & 7;
}
