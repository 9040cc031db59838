/**
 * LAR, LSL, VERR, VERW in 64-bit mode, register-level against the SDM
 * (vol. 2 "LAR", "LSL", "VERR/VERW"): the value and ZF for a valid
 * selector, ZF = 0 and the destination unchanged for an invalid one (null,
 * beyond the table, a type the instruction does not take, too privileged),
 * no other flag touched; and Linux's vDSO getcpu path (LSL of the per-CPU
 * GDT entry __CPUNODE_SEG = 15 * 8 + 3 from CPL 3, vdso_read_cpunode in
 * arch/x86/include/asm/segment.h, when CPUID offers no RDPID); and the
 * host's own Intel CPU's answers for the selectors of Linux's GDT a user
 * program can name (golden/segmentQuery-host.txt, from
 * golden/segmentQuery-host.sh).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, installHandlers, KCODE, UCODE, RAX, RCX, TSS_SEL, USER_CS, USER_DS, KERNEL_CS, KERNEL_DS } from './harness';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';
import { readFileSync } from 'node:fs';
import { repoPath } from '../../util/paths';

const CONFORMING = 0x50, EXEC_ONLY = 0x58, CALL_GATE = 0x60, CPUNODE = 0x7b;
const ZF = 0x40, CF = 1;
/** node 1, cpu 3, as Linux's setup_getcpu encodes them in the limit of a read-only DPL 3 data segment */
const CPUNODE_LIMIT = (1 << 12) | 3;

function withGdt(): SysMachine {
  const m = new SysMachine();
  installHandlers(m);
  m.phys64(0x8000 + CONFORMING, 0x00af9e000000ffffn);
  m.phys64(0x8000 + EXEC_ONLY, 0x00af98000000ffffn);
  m.phys64(0x8000 + CALL_GATE, 0x0000ec0000100000n);
  m.phys64(0x8000 + CALL_GATE + 8, 0n);
  // type 5 (read-only data, expand-down, accessed), S, DPL 3, P, D: Linux's GDT_ENTRY_CPUNODE
  m.phys64(0x8000 + (CPUNODE & ~7), BigInt(CPUNODE_LIMIT & 0xffff) | (BigInt(0x0040f500 | (CPUNODE_LIMIT & 0xf0000)) << 32n));
  m.sys.gdtLimit = 0x7f;
  return m;
}

/** run `insn` (its source register rcx = sel, destination rax preset to a marker) at CPL 0 or 3: [rax, ZF, CF] */
function query(insn: string, sel: number, cpl: 0 | 3 = 0): [bigint, boolean, boolean] {
  const m = withGdt();
  m.setReg(RAX, 0x1111222233334444n);
  m.setReg(RCX, BigInt(sel));
  const code = `f9 ${insn} 0f 0b`; // stc; the query; ud2 to stop
  if (cpl === 3) { m.code(UCODE, code); m.toUser(UCODE); } else m.code(KCODE, code);
  runSystemCpu(m.cpu, 2);
  const f = m.cpu.getRflags();
  return [m.reg(RAX), (f & ZF) !== 0, (f & CF) !== 0];
}
const UNCHANGED = 0x1111222233334444n;

describe('LAR', () => {
  test('access rights (second dword & 0x00ffff00, as Intel processors give them; 16-bit: & 0xff00), zero-extended; ZF set, CF kept', () => {
    assert.deepEqual(query('0f 02 c1', USER_CS), [0x00affa00n, true, true]); // lar eax, cx
    assert.deepEqual(query('48 0f 02 c1', KERNEL_DS), [0x00cf9200n, true, true]); // lar rax, cx
    assert.deepEqual(query('66 0f 02 c1', USER_CS), [UNCHANGED & ~0xffffn | 0xfa00n, true, true]); // lar ax, cx
  });
  test('system descriptors: a 64-bit TSS and a call gate are valid; a too-privileged one (DPL < CPL) is not', () => {
    assert.deepEqual(query('0f 02 c1', TSS_SEL), [0x00008900n, true, true]);
    assert.deepEqual(query('0f 02 c1', CALL_GATE, 3), [0x0000ec00n, true, true]);
    assert.deepEqual(query('0f 02 c1', TSS_SEL, 3), [UNCHANGED, false, true]);
  });
  test('invalid: null, beyond the GDT limit, DPL < RPL, kernel data from CPL 3: ZF = 0, rax unchanged; a conforming segment is visible from CPL 3', () => {
    for (const [sel, cpl] of [[0, 0], [0x80, 0], [KERNEL_DS | 3, 0], [KERNEL_DS, 3]] as const) {
      assert.deepEqual(query('48 0f 02 c1', sel, cpl), [UNCHANGED, false, true], `0x${sel.toString(16)} at CPL ${cpl}`);
    }
    assert.deepEqual(query('0f 02 c1', CONFORMING, 3), [0x00af9e00n, true, true]);
  });
});

describe('LSL', () => {
  test('the byte-granular limit (G scales it); a TSS\'s limit; a call gate has none (ZF = 0)', () => {
    assert.deepEqual(query('0f 03 c1', KERNEL_CS), [0xffffffffn, true, true]); // G = 1: 0xfffff pages
    assert.deepEqual(query('0f 03 c1', TSS_SEL), [0x2068n, true, true]);
    assert.deepEqual(query('0f 03 c1', CALL_GATE, 3), [UNCHANGED, false, true]);
  });
  test('Linux\'s vDSO getcpu: lsl of __CPUNODE_SEG at CPL 3 gives (node << 12) | cpu', () => {
    const [v, zf] = query('0f 03 c1', CPUNODE, 3);
    assert.equal(zf, true);
    assert.deepEqual([Number(v) & 0xfff, Number(v) >> 12], [3, 1]);
  });
});

describe('VERR / VERW', () => {
  const ver = (w: boolean, sel: number, cpl: 0 | 3 = 0): boolean => query(`0f 00 ${w ? 'e9' : 'e1'}`, sel, cpl)[1];
  test('VERR: data and readable code; not execute-only code or system descriptors', () => {
    assert.deepEqual([KERNEL_CS, KERNEL_DS, CPUNODE, EXEC_ONLY, TSS_SEL].map(s => ver(false, s)), [true, true, true, false, false]);
  });
  test('VERW: writable data only; privilege: DPL >= CPL and >= RPL, conforming code readable from anywhere', () => {
    assert.deepEqual([KERNEL_DS, USER_DS, CPUNODE, KERNEL_CS].map(s => ver(true, s)), [true, true, false, false]);
    assert.deepEqual([ver(true, KERNEL_DS, 3), ver(true, USER_DS, 3), ver(true, KERNEL_DS | 3), ver(false, CONFORMING, 3), ver(false, 0)], [false, true, false, true, false]);
  });
});

describe('against the host\'s Intel CPU under Linux (golden/segmentQuery-host.txt)', () => {
  test('LAR, LSL, VERR, VERW at CPL 3 of Linux\'s GDT entries give the host CPU\'s values and ZF', () => {
    const golden = readFileSync(repoPath('test', 'system', 'cpu', 'golden', 'segmentQuery-host.txt'), 'utf8').split('\n').filter(l => l !== '' && !l.startsWith('#'));
    // Linux 6.1's gdt_page (arch/x86/kernel/cpu/common.c: GDT_ENTRY_INIT flags with the accessed bit) and
    // setup_getcpu's entry 15 for cpu 1 on node 0 (the host program runs pinned to CPU 1)
    const linux: [number, bigint][] = [[0x10, 0x00af9b000000ffffn], [0x18, 0x00cf93000000ffffn], [0x20, 0x00cffb000000ffffn],
      [0x28, 0x00cff3000000ffffn], [0x30, 0x00affb000000ffffn], [0x78, 0x0040f50000000001n]];
    const lines = golden.map(line => {
      const sel = parseInt(line.split(' ')[0], 16);
      const m = withGdt();
      for (const [at, d] of linux) m.phys64(0x8000 + at, d);
      m.setReg(RAX, 0x1111n); m.setReg(3, 0x2222n); m.setReg(RCX, BigInt(sel));
      // lar rax, rcx; setz dl; lsl rbx, rcx; setz dh; verr cx; setz r8b; verw cx; setz r9b; ud2
      m.code(UCODE, '48 0f 02 c1 0f 94 c2 48 0f 03 d9 0f 94 c6 0f 00 e1 41 0f 94 c0 0f 00 e9 41 0f 94 c1 0f 0b');
      m.toUser(UCODE);
      runSystemCpu(m.cpu, 9);
      const dl = Number(m.reg(2) & 0xffn), dh = Number((m.reg(2) >> 8n) & 0xffn);
      return `0x${sel.toString(16).padStart(2, '0')} lar 0x${m.reg(RAX).toString(16)} ${dl} lsl 0x${m.reg(3).toString(16)} ${dh} verr ${m.reg(8) & 0xffn} verw ${m.reg(9) & 0xffn}`;
    });
    assert.deepEqual(lines, golden);
  });
});
