/**
 * RISC-V kprobes (emulator/arch/riscv64/kprobes) on the riscv64 sample
 * kernel: odd addresses and system instructions refused, c.ebreak over
 * compressed instructions and ebreak over 4-byte ones with the original
 * bytes restored exactly, simulation of jal/jalr/auipc/branches and their
 * compressed forms, out-of-line steps ended by the slot's ebreak,
 * kretprobes through ra — checked against the unprobed run and x86_64.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Errno } from '../../emulator/kernel/abi';
import type { Kprobe, Kretprobe } from '../../emulator/kprobes';
import type { DecodedInsn } from '../../emulator/arch/types';
import { DebugMemory } from '../../emulator/debug/memory';
import { rig, insns } from './harness';
import { checkSimulatedClasses, imageInsns, SimClass, TextPatch } from './simulated';

const RV = { arch: 'riscv64', cpus: 2 };
const FUNCS = ['do_fork', 'copy_process', 'alloc_pid', 'sys_open', 'path_lookup', 'fib', 'kprobe_target'];
/** refused: system instructions, fences, LR/SC (nothing else is in these functions) */
const refused = (mnemonic: string): boolean => /^(ecall|ebreak|c\.ebreak|csr|fence|wfi|sret)/.test(mnemonic);

const half = (d: DecodedInsn): number => d.bytes[0] | (d.bytes[1] << 8);
const word = (d: DecodedInsn): number => (half(d) | (d.bytes[2] << 16) | (d.bytes[3] << 24)) >>> 0;
/** a 4-byte instruction with this major opcode */
const op32 = (opcode: number) => (d: DecodedInsn): boolean => d.length === 4 && (word(d) & 0x7f) === opcode;
/** a compressed instruction of quadrant `q` with funct3 `f3` */
const rvc = (q: number, f3: number) => (d: DecodedInsn): boolean => d.length === 2 && (half(d) & 3) === q && half(d) >>> 13 === f3;
/** c.jr (link 0) / c.jalr (link 1): quadrant 2, funct4 100x, rs2 = 0, rs1 != 0 */
const crJump = (link: number) => (d: DecodedInsn): boolean =>
  rvc(2, 4)(d) && ((half(d) >>> 12) & 1) === link && ((half(d) >>> 2) & 31) === 0 && ((half(d) >>> 7) & 31) !== 0;

/** The classes riscv kprobes simulate (decode-insn.c / simulate-insn.c), as the image encodes them. */
const SIM_CLASSES: SimClass[] = [
  { name: 'jal', match: op32(0x6f) },
  { name: 'jalr', match: op32(0x67) },
  { name: 'auipc', match: op32(0x17) },
  { name: 'branch', match: op32(0x63), conditional: true },
  { name: 'c.j', match: rvc(1, 5) },
  { name: 'c.jr', match: crJump(0) },
  { name: 'c.jalr', match: crJump(1) },
  { name: 'c.beqz', match: rvc(1, 6), conditional: true },
  { name: 'c.bnez', match: rvc(1, 7), conditional: true },
];

/** jal rd, off */
function encJal(rd: number, off: number): Uint8Array {
  const w = ((((off >> 20) & 1) << 31) | (((off >> 1) & 0x3ff) << 21) | (((off >> 11) & 1) << 20) | (((off >> 12) & 0xff) << 12) | (rd << 7) | 0x6f) >>> 0;
  return Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);
}
const NOP = Uint8Array.of(0x13, 0x00, 0x00, 0x00);

/**
 * The image is linked with -mno-relax, so it has no jal: every call is
 * auipc ra + jalr ra. Rewrite the calls in `fn` as the relaxing linker
 * would (jal ra, target; the freed 4 bytes a nop): the kernel runs the same.
 */
function relaxedCalls(fn: string): TextPatch[] {
  const r = rig(RV);
  const ds = insns(r, fn);
  const out: TextPatch[] = [];
  for (let i = 0; i + 1 < ds.length; i++) {
    const a = ds[i], b = ds[i + 1];
    if (!op32(0x17)(a) || !op32(0x67)(b) || ((word(a) >>> 7) & 31) !== 1 || ((word(b) >>> 7) & 31) !== 1 || ((word(b) >>> 15) & 31) !== 1) continue;
    const target = a.addr + BigInt((word(a) & 0xfffff000) | 0) + BigInt(word(b) >> 20);
    const bytes = new Uint8Array(8);
    bytes.set(encJal(1, Number(target - a.addr)));
    bytes.set(NOP, 4);
    out.push({ addr: a.addr, bytes });
  }
  return out;
}

describe('riscv64 kprobes', () => {
  test('odd address -EINVAL; c.ebreak over 2-byte and ebreak over 4-byte instructions; unregister restores the bytes', () => {
    const r = rig(RV);
    assert.equal(r.engine.registerKprobe({ addr: r.sym('do_fork') + 1n }), -Errno.EINVAL);
    const mem = r.machine.kernel.mem;
    const at = (a: bigint, n: number): number[] => [...mem.readBytes(Number(BigInt.asIntN(64, a)), n)];
    let two = 0, four = 0;
    for (const i of insns(r, 'copy_process').concat(insns(r, 'do_fork'))) {
      if (refused(i.mnemonic)) continue;
      const before = at(i.addr, i.length);
      const kp: Kprobe = { addr: i.addr };
      assert.equal(r.engine.registerKprobe(kp), 0, `${i.mnemonic} ${i.operands}`);
      assert.deepEqual(at(i.addr, i.length), i.length === 2 ? [0x02, 0x90] : [0x73, 0x00, 0x10, 0x00], `${i.mnemonic} (${i.length} bytes)`);
      if (i.length === 2) two++; else four++;
      r.engine.unregisterKprobe(kp);
      assert.deepEqual(at(i.addr, i.length), before);
    }
    assert.ok(two > 0 && four > 0, `${two} compressed, ${four} full-size`);
  });

  test('inside a 4-byte instruction: -EILSEQ with one line naming the place, nothing written (the ebreak would straddle into the next instruction)', () => {
    const r = rig(RV);
    const mem = r.machine.kernel.mem;
    const full = insns(r, 'copy_process').find(i => i.length === 4 && !refused(i.mnemonic));
    assert.ok(full);
    const mid = full.addr + 2n;
    const before = [...mem.readBytes(Number(BigInt.asIntN(64, full.addr)), 8)];
    const res = r.engine.registerKprobeResult({ addr: mid });
    assert.ok(typeof res !== 'number' && res.errno === -Errno.EILSEQ, JSON.stringify(res));
    assert.match((res as { reason: string }).reason, /^copy_process\+0x[0-9a-f]+ is not at an instruction boundary$/);
    assert.deepEqual([...mem.readBytes(Number(BigInt.asIntN(64, full.addr)), 8)], before);
    assert.equal(r.engine.registerKprobe({ addr: full.addr }), 0, 'the instruction itself is probed');
  });

  test('a probe on every instruction of busy functions: every line the kernel prints is unchanged, every probe hit counted', () => {
    const plain = rig(RV).run();
    const r = rig(RV);
    const kps: Kprobe[] = [];
    let sims = 0;
    for (const f of FUNCS) {
      for (const i of insns(r, f)) {
        if (refused(i.mnemonic)) { assert.equal(r.engine.registerKprobe({ addr: i.addr }), -Errno.EINVAL, i.mnemonic); continue; }
        const kp: Kprobe = { addr: i.addr, pre_handler: () => 0, post_handler: () => undefined };
        assert.equal(r.engine.registerKprobe(kp), 0, `${i.mnemonic} ${i.operands} in ${f}`);
        if (kp.ainsn?.mode === 'simulate') sims++;
        kps.push(kp);
      }
    }
    const lines = r.run();
    assert.equal(r.machine.exit?.reason, 'poweroff');
    assert.deepEqual(lines.filter(l => !l.startsWith('kprobe')).sort(), [...plain].sort());
    assert.ok(lines.some(l => /^summary: .*checksum f5eea83031290534$/.test(l)));
    assert.ok(sims > 10, `${sims} simulated probes`);
    assert.ok(kps.filter(k => (k.hits ?? 0) > 0).length > kps.length / 2);
    assert.equal(kps.reduce((n, k) => n + (k.nmissed ?? 0), 0), 0);
  });

  test('kretprobe through ra: the same counts and return values as on x86_64; never optimized', () => {
    const counts = (arch: string): { k: number; r: number; neg: number } => {
      const r = rig({ arch, cpus: 2 });
      const kp: Kprobe = { symbol_name: 'do_fork', pre_handler: () => 0 };
      let neg = 0;
      const rp: Kretprobe = { kp: { symbol_name: 'sys_open' }, maxactive: 20, handler: (_ri, regs) => { if (BigInt.asIntN(64, regs.returnValue) < 0n) neg++; return 0; } };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.equal(r.engine.registerKretprobe(rp), 0);
      r.engine.waitForOptimizer();
      if (arch === 'riscv64') assert.match(r.engine.optimizer.status(kp.addr as bigint).reason ?? '', /no jump optimization on riscv64/);
      r.run();
      return { k: kp.hits ?? 0, r: rp.kp.hits ?? 0, neg };
    };
    const v = counts('riscv64');
    assert.deepEqual(v, counts('x86_64'));
    assert.ok(v.r > 0 && v.neg > 0);
  });

  test('a probe on a compressed instruction: c.ebreak over exactly its 2 bytes, the debug facade reads the original, unregister restores them', () => {
    const r = rig(RV);
    const mem = r.machine.kernel.mem;
    const dbg = DebugMemory.of(r.machine);
    // a compressed instruction run by every worker iteration, followed by another instruction
    const ds = insns(r, 'do_fork');
    const i = ds.findIndex(d => d.length === 2 && !refused(d.mnemonic));
    assert.ok(i >= 0 && i + 1 < ds.length, 'do_fork has a compressed instruction');
    const c = ds[i];
    const before = [...mem.readBytes(Number(BigInt.asIntN(64, c.addr)), 6)];
    const kp: Kprobe = { addr: c.addr, pre_handler: () => 0, post_handler: () => undefined };
    assert.equal(r.engine.registerKprobe(kp), 0);
    assert.deepEqual([...(kp.opcode ?? [])], before.slice(0, 2), 'the saved opcode is the 2-byte instruction');
    assert.equal(kp.ainsn?.length, 2);
    const now = [...mem.readBytes(Number(BigInt.asIntN(64, c.addr)), 6)];
    assert.deepEqual(now, [0x02, 0x90, ...before.slice(2)], 'c.ebreak, and the next instruction untouched');
    assert.deepEqual([...dbg.read(c.addr, 6).bytes], before, 'the debugger reads the original bytes');
    assert.deepEqual([...dbg.read(c.addr, 6, true).bytes], now, 'and the patched ones on request');
    const patch = dbg.patches().find(p => p.addr === c.addr);
    assert.deepEqual({ len: patch?.patchLength, name: patch?.breakpointName, end: patch?.end }, { len: 2, name: 'c.ebreak', end: c.addr + 2n },
      'the debugger knows a c.ebreak covers the 2-byte instruction');
    assert.throws(() => dbg.write(c.addr + 1n, Uint8Array.of(0)), /overlaps the probed instruction/);
    dbg.write(c.addr + 2n, Uint8Array.from(now.slice(2, 3))); // the next instruction is not under the probe (same byte written back)
    const lines = r.run();
    assert.equal(kp.hits, 4 * 24, 'hit once per do_fork call');
    assert.equal(kp.nmissed, 0);
    assert.deepEqual([...lines].sort(), [...rig(RV).run()].sort());
    r.engine.unregisterKprobe(kp);
    assert.deepEqual([...mem.readBytes(Number(BigInt.asIntN(64, c.addr)), 6)], before, 'the 2 original bytes are back');
  });

  test('rv64 has no c.jal: that encoding is c.addiw, stepped out of line like any ALU instruction', () => {
    const r = rig(RV);
    const addiw = imageInsns(r).filter(rvc(1, 1));
    assert.ok(addiw.length > 0, 'the image has c.addiw');
    for (const d of addiw.slice(0, 8)) {
      assert.match(d.mnemonic, /^(addiw|sext\.w)$/, `${d.mnemonic} ${d.operands}`);
      const kp: Kprobe = { addr: d.addr };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.equal(kp.ainsn?.mode, 'slot');
    }
  });

  test('each simulated class (jal, jalr, auipc, branches, c.j, c.jr, c.jalr, c.beqz, c.bnez): registers after the simulation = after the real instruction', () => {
    const patches = relaxedCalls('do_fork');
    assert.ok(patches.length > 0, 'do_fork makes calls');
    const out = checkSimulatedClasses('riscv64', SIM_CLASSES, patches);
    assert.ok((out.get('jal')?.sites ?? 0) >= patches.length, 'the relaxed calls are jal sites');
  });
});
