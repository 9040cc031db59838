/**
 * arm64 kprobes (emulator/arch/aarch64/kprobes): decode-insn's verdicts,
 * simulation of pc-relative instructions, out-of-line single-step ended by
 * the slot's step breakpoint, kretprobes through the link register, no jump
 * optimization — on the aarch64 sample kernel, checked against the
 * unprobed run and against the x86_64 machine.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Errno } from '../../emulator/kernel/abi';
import type { Kprobe, Kretprobe } from '../../emulator/kprobes';
import type { DecodedInsn } from '../../emulator/arch/types';
import { rig, insns } from './harness';
import { checkSimulatedClasses, imageInsns, SimClass, TextPatch } from './simulated';

const A64 = { arch: 'aarch64', cpus: 2 };

/** Functions the sample kernel runs many times, with branches, calls, loads of literals and adrp. */
const FUNCS = ['do_fork', 'copy_process', 'alloc_pid', 'sys_open', 'path_lookup', 'fib', 'kprobe_target'];

const word = (d: DecodedInsn): number => (d.bytes[0] | (d.bytes[1] << 8) | (d.bytes[2] << 16) | (d.bytes[3] << 24)) >>> 0;
const enc = (mask: number, value: number) => (d: DecodedInsn): boolean => ((word(d) & mask) >>> 0) === value;
const le = (w: number): Uint8Array => Uint8Array.of(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, w >>> 24);

/** the address a load (literal) reads: pc + imm19 * 4 */
const literal = (d: DecodedInsn): bigint => d.addr + BigInt.asIntN(19, BigInt((word(d) >>> 5) & 0x7ffff)) * 4n;

/** The classes arm64 kprobes simulate (decode-insn.c / simulate-insn.c), by encoding (ARM ARM C4.1). */
const SIM_CLASSES: SimClass[] = [
  { name: 'b', match: enc(0xfc000000, 0x14000000) },
  { name: 'bl', match: enc(0xfc000000, 0x94000000) },
  { name: 'b.cond', match: enc(0xff000010, 0x54000000), conditional: true },
  { name: 'cbz', match: enc(0x7f000000, 0x34000000), conditional: true },
  { name: 'cbnz', match: enc(0x7f000000, 0x35000000), conditional: true },
  { name: 'tbz', match: enc(0x7f000000, 0x36000000), conditional: true },
  { name: 'tbnz', match: enc(0x7f000000, 0x37000000) },
  { name: 'br', match: enc(0xfffffc1f, 0xd61f0000) },
  { name: 'blr', match: enc(0xfffffc1f, 0xd63f0000) },
  { name: 'ret', match: enc(0xfffffc1f, 0xd65f0000) },
  { name: 'adr', match: enc(0x9f000000, 0x10000000) },
  { name: 'adrp', match: enc(0x9f000000, 0x90000000) },
  // (the image's adrp pairs load only 64-bit values: the 32-bit and ldrsw literal forms have no site to rewrite)
  { name: 'ldr literal (x)', match: enc(0xff000000, 0x58000000), reads: d => ({ addr: literal(d), len: 8 }) },
];

/** ldr (unsigned offset) -> its literal form, by the top bits: ldr x (0xf94), ldr w (0xb94), ldrsw (0xb98) */
const LITERAL_FORMS: readonly { ui: number; size: number; literal: number }[] = [
  { ui: 0xf9400000, size: 8, literal: 0x58000000 },
  { ui: 0xb9400000, size: 4, literal: 0x18000000 },
  { ui: 0xb9800000, size: 4, literal: 0x98000000 },
];

/**
 * The image loads its data through adrp + ldr [xN, #off]; rewrite the ldr
 * of such pairs as ldr (literal) of the same address (the adrp stays): the
 * kernel runs the same.
 */
function literalLoads(r: ReturnType<typeof rig>): TextPatch[] {
  const out: TextPatch[] = [];
  const ds = imageInsns(r);
  for (let i = 0; i + 1 < ds.length; i++) {
    const a = ds[i], b = ds[i + 1];
    if (!enc(0x9f000000, 0x90000000)(a) || b.addr !== a.addr + 4n) continue;
    const wa = word(a), wb = word(b);
    const form = LITERAL_FORMS.find(f => ((wb & 0xffc00000) >>> 0) === f.ui);
    if (!form || ((wb >>> 5) & 31) !== (wa & 31)) continue;
    const page = (a.addr & ~0xfffn) + (BigInt.asIntN(21, BigInt((((wa >>> 5) & 0x7ffff) << 2) | ((wa >>> 29) & 3))) << 12n);
    const off = Number(page + BigInt(((wb >>> 10) & 0xfff) * form.size) - b.addr) / 4;
    if (Math.abs(off) >= 1 << 18) continue;
    out.push({ addr: b.addr, bytes: le((form.literal | ((off & 0x7ffff) << 5) | (wb & 31)) >>> 0) });
  }
  return out;
}

describe('arm64 kprobes', () => {
  test('decode-insn: unaligned addresses and exception-generating instructions are -EINVAL; others slot or simulate', () => {
    const r = rig(A64);
    const doFork = r.sym('do_fork');
    assert.equal(r.engine.registerKprobe({ addr: doFork + 2n }), -Errno.EINVAL, 'unaligned');
    let sawReject = false, sawSim = false, sawSlot = false;
    for (const f of FUNCS) {
      for (const i of insns(r, f)) {
        const kp: Kprobe = { addr: i.addr };
        const rc = r.engine.registerKprobe(kp);
        const mode = kp.ainsn?.mode;
        // exception generation and exclusive load/store (an ldaxr..stlxr sequence) are refused
        if (i.flow === 'trap' || /^(ld|st)[al]?x[rp]/.test(i.mnemonic)) { assert.equal(rc, -Errno.EINVAL, `${i.mnemonic} at ${f}`); sawReject = true; continue; }
        assert.equal(rc, 0, `${i.mnemonic} ${i.operands} at ${f}`);
        const pcRelative = ['b', 'bl', 'br', 'blr', 'ret', 'cbz', 'cbnz', 'tbz', 'tbnz', 'adr', 'adrp'].includes(i.mnemonic)
          || i.mnemonic.startsWith('b.') || (i.mnemonic.startsWith('ldr') && !i.operands.includes('['));
        assert.equal(mode, pcRelative ? 'simulate' : 'slot', `${i.mnemonic} ${i.operands}`);
        if (mode === 'simulate') sawSim = true; else sawSlot = true;
      }
    }
    // a hypercall is hvc #0 (kprobe_image.h's stubs are inlined into start_kernel): a probe there is refused
    const hvc = insns(r, 'start_kernel').find(i => i.mnemonic === 'hvc');
    assert.ok(hvc, 'start_kernel makes hypercalls');
    assert.equal(r.engine.registerKprobe({ addr: hvc.addr }), -Errno.EINVAL);
    assert.ok(sawSim && sawSlot && sawReject, `sim ${sawSim} slot ${sawSlot} reject ${sawReject}`);
  });

  test('a probe on every instruction of busy functions: the kernel runs exactly as without probes, every probe hit', () => {
    const plain = rig(A64).run();
    const r = rig(A64);
    const kps: Kprobe[] = [];
    let posts = 0;
    for (const f of FUNCS) {
      for (const i of insns(r, f)) {
        if (i.flow === 'trap' || /^(ld|st)[al]?x[rp]/.test(i.mnemonic)) continue;
        const kp: Kprobe = { addr: i.addr, pre_handler: () => 0, post_handler: () => { posts++; } };
        assert.equal(r.engine.registerKprobe(kp), 0);
        kps.push(kp);
      }
    }
    const lines = r.run();
    assert.equal(r.machine.exit?.reason, 'poweroff');
    // the probes cost time, so lines of different CPUs may interleave differently; every line is the same
    assert.deepEqual(lines.filter(l => !l.startsWith('kprobe')).sort(), [...plain].sort(), 'simulated and stepped instructions behave as the real ones');
    assert.ok(lines.some(l => /^summary: .*checksum f5eea83031290534$/.test(l)));
    const hit = kps.filter(k => (k.hits ?? 0) > 0).length;
    assert.ok(hit > kps.length / 2, `${hit} of ${kps.length} probes hit`);
    assert.equal(kps.reduce((n, k) => n + (k.nmissed ?? 0), 0), 0);
    assert.equal(posts, kps.reduce((n, k) => n + (k.hits ?? 0), 0), 'a post handler per hit');
  });

  test('kretprobe on sys_open (link register hijack) sees the return values; same hit counts as on x86_64; never [OPTIMIZED]', () => {
    const counts = (arch: string): { k: number; r: number; neg: number; optimized: boolean } => {
      const r = rig({ arch, cpus: 2 });
      const kp: Kprobe = { symbol_name: 'do_fork', pre_handler: () => 0 };
      let neg = 0;
      const rp: Kretprobe = { kp: { symbol_name: 'sys_open' }, maxactive: 20, handler: (_ri, regs) => { if (BigInt.asIntN(64, regs.returnValue) < 0n) neg++; return 0; } };
      assert.equal(r.engine.registerKprobe(kp), 0);
      assert.equal(r.engine.registerKretprobe(rp), 0);
      r.engine.waitForOptimizer();
      const optimized = r.engine.optimizer.isOptimized(kp.addr as bigint);
      r.run();
      return { k: kp.hits ?? 0, r: rp.kp.hits ?? 0, neg, optimized };
    };
    const a = counts('aarch64'), x = counts('x86_64');
    assert.equal(a.optimized, false);
    assert.equal(x.optimized, true, 'x86_64 optimizes the same probe');
    assert.deepEqual({ k: a.k, r: a.r, neg: a.neg }, { k: x.k, r: x.r, neg: x.neg });
    assert.ok(a.r > 0 && a.neg > 0);
    const st = rig(A64);
    const kp: Kprobe = { symbol_name: 'do_fork' };
    st.engine.registerKprobe(kp);
    assert.match(st.engine.optimizer.status(kp.addr as bigint).reason ?? '', /no jump optimization on aarch64/);
  });

  test('each simulated class (b, bl, b.cond, cbz, cbnz, tbz, tbnz, br, blr, ret, adr, adrp, ldr literal): registers after the simulation = after the real instruction', () => {
    // the image has no load (literal): the loads of adrp + ldr pairs are rewritten as ones
    const patches = literalLoads(rig(A64));
    assert.ok(patches.length > 0, 'adrp + ldr pairs to rewrite');
    checkSimulatedClasses('aarch64', SIM_CLASSES, patches);
  });
});
