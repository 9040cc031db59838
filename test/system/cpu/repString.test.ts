/**
 * rep movs / rep stos on a full-system CPU (SDM vol. 2 "REP/REPE/REPZ/REPNE/
 * REPNZ", "MOVS", "STOS"; vol. 3 4.7 on #PF): element by element in
 * meaning, though the CPU moves a page's worth at once
 * (emulator/arch/x86_64/exec/stringPaged.ts). A fault at a page leaves
 * rcx/rsi/rdi at the first element not done and rip at the instruction,
 * with every earlier element stored; overlapping source and destination
 * copy as successive elements do (a byte smeared forward), also when the
 * overlap is only physical (two linear pages on one frame); A and D bits
 * as the elements' accesses set them; code the instruction overwrites is
 * decoded (and translated) again.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, installHandlers, runToHandler, P, RW, A, D, KCODE, KDATA, RAX, RBX, RCX, RSI, RDI } from './harness';
import { PF_W } from '../../../emulator/arch/x86_64/sysmode/exception';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';
import { allTranslators } from '../../../emulator/jit';

const VA = 0x7000000, PA = 0x300000;
/** VA.. mapped to PA.. for `pages` pages (writable, A and D clear) */
function mapped(m: SysMachine, pages: number, va = VA, pa = PA): void {
  for (let k = 0; k < pages; k++) m.map(BigInt(va + k * 0x1000), BigInt(pa + k * 0x1000), P | RW);
}
const leaf = (m: SysMachine, va: number): bigint => m.read64(m.entry(BigInt(va), 1));

describe('x86_64 rep movs / rep stos on the system CPU', () => {
  test('rep stosq into a page that is not present: the pages before it filled, #PF (W) at the instruction with CR2 = that page, rcx/rdi at the first element not stored, D set in the written leaves', () => {
    const m = new SysMachine('off');
    installHandlers(m);
    mapped(m, 2);
    m.code(KCODE, 'f3 48 ab f4'); // rep stosq; hlt
    m.setReg(RAX, 0x1122334455667788n);
    m.setReg(RDI, BigInt(VA + 8));
    m.setReg(RCX, 3n * 512n);
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.errorCode, d.rip], [14, PF_W, BigInt(KCODE)]);
    assert.equal(m.sys.cr2, VA + 0x2000);
    assert.equal(m.reg(RCX), 3n * 512n - 511n - 512n);
    assert.equal(m.reg(RDI), BigInt(VA + 0x2000));
    const dv = new DataView(m.phys.readBytes(PA, 0x2000).buffer);
    assert.equal(dv.getBigUint64(0, true), 0n, 'below rdi: untouched');
    for (let off = 8; off < 0x2000; off += 8) assert.equal(dv.getBigUint64(off, true), 0x1122334455667788n, `qword at +0x${off.toString(16)}`);
    assert.equal(leaf(m, VA) & D, D);
    assert.equal(leaf(m, VA + 0x1000) & D, D);
  });

  test('rep stosd whose elements straddle pages (rdi 2 bytes before a page end): the pattern repeats exactly, rcx 0, rdi past the last', () => {
    const m = new SysMachine('off');
    mapped(m, 3);
    m.code(KCODE, 'f3 ab f4'); // rep stosd; hlt
    m.setReg(RAX, 0x0102030404030201n); // stosd stores eax only
    const start = VA + 0xffe, n = 1500;
    m.setReg(RDI, BigInt(start));
    m.setReg(RCX, BigInt(n));
    const r = runSystemCpu(m.cpu, 10);
    assert.ok(r.halted);
    assert.equal(m.reg(RCX), 0n);
    assert.equal(m.reg(RDI), BigInt(start + 4 * n));
    const b = m.phys.readBytes(PA + 0xffe, 4 * n + 2);
    for (let k = 0; k < 4 * n; k++) assert.equal(b[k], [1, 2, 3, 4][k % 4], `byte ${k}`);
    assert.equal(b[4 * n], 0);
  });

  test('rep movsb with the destination one byte above the source, across pages: the first byte smeared forward as element copies do; A on the source leaves, D on the destination ones', () => {
    const m = new SysMachine('off');
    mapped(m, 3);
    m.code(KCODE, 'f3 a4 f4'); // rep movsb; hlt
    m.phys.writeBytes(PA, Uint8Array.from({ length: 0x3000 }, (_, k) => (k * 7 + 3) & 0xff));
    const n = 0x2100;
    m.setReg(RSI, BigInt(VA));
    m.setReg(RDI, BigInt(VA + 1));
    m.setReg(RCX, BigInt(n));
    assert.ok(runSystemCpu(m.cpu, 10).halted);
    const b = m.phys.readBytes(PA, n + 2);
    for (let k = 0; k <= n; k++) assert.equal(b[k], 3, `byte ${k}`);
    assert.equal(b[n + 1], ((n + 1) * 7 + 3) & 0xff, 'the byte after the last element: untouched');
    assert.deepEqual([m.reg(RSI), m.reg(RDI), m.reg(RCX)], [BigInt(VA + n), BigInt(VA + 1 + n), 0n]);
    for (const p of [VA, VA + 0x1000, VA + 0x2000]) assert.equal(leaf(m, p) & A, A);
    assert.equal(leaf(m, VA + 0x2000) & D, D);
  });

  test('rep movsq between two linear pages on one physical frame, the destination 8 bytes above the source: copied as successive elements do', () => {
    const m = new SysMachine('off');
    mapped(m, 1, VA, PA);
    mapped(m, 1, VA + 0x100000, PA); // an alias of the same frame
    m.code(KCODE, 'f3 48 a5 f4'); // rep movsq; hlt
    m.phys.writeBytes(PA, Uint8Array.from({ length: 0x1000 }, (_, k) => k & 0xff));
    m.setReg(RSI, BigInt(VA));
    m.setReg(RDI, BigInt(VA + 0x100000 + 8));
    m.setReg(RCX, 100n);
    assert.ok(runSystemCpu(m.cpu, 10).halted);
    const b = m.phys.readBytes(PA, 8 * 102);
    for (let k = 0; k < 8 * 101; k++) assert.equal(b[k], k % 8, `byte ${k}: the first qword repeated`);
    assert.equal(b[8 * 101], (8 * 101) & 0xff);
  });

  for (const mode of ['off', 'on', 'lockstep'] as const) {
    test(`translator ${mode}: a function rewritten by rep movsb after 5000 calls runs its new bytes`, () => {
      const m = new SysMachine(mode);
      const f = KCODE + 0x800;
      m.code(f, 'b8 01 00 00 00 c3'); // mov eax, 1; ret
      m.code(KDATA, 'b8 02 00 00 00 c3'); // mov eax, 2; ret
      // loop: call f; add ebx, eax; dec ecx; jnz loop; lea rsi, KDATA; lea rdi, f; mov ecx, 6; rep movsb; call f; hlt
      const rel = (from: number, to: number): string => [...new Uint8Array(new Int32Array([to - from]).buffer)].map(x => x.toString(16).padStart(2, '0')).join(' ');
      const le32 = (v: number): string => rel(0, v);
      m.code(KCODE, `e8 ${rel(KCODE + 5, f)} 01 c3 ff c9 75 f5 be ${le32(KDATA)} bf ${le32(f)} b9 06 00 00 00 f3 a4 e8 ${rel(KCODE + 33, f)} f4`);
      m.setReg(RCX, 5000n);
      const translated = (): number => allTranslators().get(`x86_64:${mode}`)?.stats.translatedInsns ?? 0;
      const t0 = translated();
      for (let slices = 0; !runSystemCpu(m.cpu, 2_000).halted; slices++) assert.ok(slices < 100, 'no hlt');
      if (mode !== 'off') assert.ok(translated() - t0 > 500, 'the calls ran translated');
      assert.equal(m.reg(RBX), 5000n);
      assert.equal(m.reg(RAX), 2n, 'the new bytes ran');
    });
  }
});
