/**
 * x86_64 lazy flags for shifts, rotates and imul (flags.ts F_SHL F_SHR
 * F_SAR F_ROL F_ROR F_IMUL) and the 64-bit multiply helpers (exec/mul64.ts),
 * against a BigInt reference written from the SDM's pseudo-code, independent
 * of the emulator's code. Every form the table can pick is run (the
 * specialised register executors and the generic ones: cl / imm8 / 1 counts,
 * register, high-byte register and memory operands), with the flags read
 * in two orders (CF/OF before the others, and all at once through rflags)
 * after an eager, a lazy (cmp), a shift and a rotate record.
 *
 * Where the SDM leaves a flag undefined the reference states the
 * emulator's documented choice: OF of a shift or rotate by more than 1 is
 * computed as for a count of 1, shifts clear AF, rotates keep it, and mul /
 * imul set SF ZF PF from the truncated result and clear AF.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { machine, getReg, setReg, hexBytes, CODE, DATA, Machine } from '../../fixtures/x86/harness';
import { CF, PF, AF, ZF, SF, OF, ARITH_MASK, imulOverflow64 } from '../../../emulator/arch/x86_64/flags';
import { MUL_OUT, mulLo64, mulu64, muls64, umulhi32 } from '../../../emulator/arch/x86_64/exec/mul64';

// ---------------------------------------------------------------- reference
const U64 = (1n << 64n) - 1n;
function parity(r: bigint): number {
  let b = Number(r & 0xffn), n = 0;
  for (; b; b >>= 1) n += b & 1;
  return n & 1 ? 0 : PF;
}
function szp(bits: bigint, r: bigint): number {
  return ((r >> (bits - 1n)) & 1n ? SF : 0) | (r === 0n ? ZF : 0) | parity(r);
}
const SH_NAMES = ['rol', 'ror', 'rcl', 'rcr', 'shl', 'shr', 'sal', 'sar'];

/** result and arithmetic flags of group-2 op n on v (size bytes, unsigned) by the raw count, flags in `fin` */
function refShift(n: number, size: number, v: bigint, raw: number, fin: number): { r: bigint; f: number } {
  const bits = BigInt(size * 8), M = (1n << bits) - 1n;
  const c = BigInt(raw & (size === 8 ? 63 : 31));
  if (c === 0n) return { r: v, f: fin };
  const msb = (x: bigint): bigint => (x >> (bits - 1n)) & 1n;
  const keep = fin & (SF | ZF | AF | PF);
  let r: bigint, cf: bigint, of: bigint;
  switch (SH_NAMES[n]) {
    case 'shl': case 'sal':
      r = (v << c) & M; cf = c <= bits ? (v >> (bits - c)) & 1n : 0n; of = msb(r) ^ cf;
      return { r, f: szp(bits, r) | (cf ? CF : 0) | (of ? OF : 0) };
    case 'shr':
      r = v >> c; cf = (v >> (c - 1n)) & 1n; of = msb(v);
      return { r, f: szp(bits, r) | (cf ? CF : 0) | (of ? OF : 0) };
    case 'sar': {
      const s = BigInt.asIntN(Number(bits), v);
      r = (s >> c) & M; cf = (s >> (c - 1n)) & 1n;
      return { r, f: szp(bits, r) | (cf ? CF : 0) };
    }
    case 'rol': {
      const k = c % bits;
      r = ((v << k) | (v >> (bits - k))) & M; cf = r & 1n; of = msb(r) ^ cf;
      return { r, f: keep | (cf ? CF : 0) | (of ? OF : 0) };
    }
    case 'ror': {
      const k = c % bits;
      r = ((v >> k) | (v << (bits - k))) & M; cf = msb(r); of = cf ^ ((r >> (bits - 2n)) & 1n);
      return { r, f: keep | (cf ? CF : 0) | (of ? OF : 0) };
    }
    default: { // rcl / rcr: a (bits + 1)-bit rotate through CF
      const W = bits + 1n, WM = (1n << W) - 1n, k = c % W;
      const x = ((fin & CF ? 1n : 0n) << bits) | v;
      const y = SH_NAMES[n] === 'rcl' ? ((x << k) | (x >> (W - k))) & WM : ((x >> k) | (x << (W - k))) & WM;
      r = y & M; cf = y >> bits;
      of = SH_NAMES[n] === 'rcl' ? msb(r) ^ cf : msb(r) ^ ((r >> (bits - 2n)) & 1n);
      return { r, f: keep | (cf ? CF : 0) | (of ? OF : 0) };
    }
  }
}
/** truncated signed product and CF = OF of imul at `bits` */
function refImul(bits: number, a: bigint, b: bigint): { r: bigint; f: number } {
  const p = BigInt.asIntN(bits, a) * BigInt.asIntN(bits, b);
  const t = BigInt.asIntN(bits, p);
  const r = BigInt.asUintN(bits, p);
  return { r, f: szp(BigInt(bits), r) | (t !== p ? CF | OF : 0) };
}
/** the condition cc (jcc encoding) from rflags bits */
function refCond(cc: number, f: number): boolean {
  const b = (m: number): boolean => (f & m) !== 0;
  let r: boolean;
  switch (cc >> 1) {
    case 0: r = b(OF); break;
    case 1: r = b(CF); break;
    case 2: r = b(ZF); break;
    case 3: r = b(CF) || b(ZF); break;
    case 4: r = b(SF); break;
    case 5: r = b(PF); break;
    case 6: r = b(SF) !== b(OF); break;
    default: r = b(ZF) || b(SF) !== b(OF); break;
  }
  return cc & 1 ? !r : r;
}

// ---------------------------------------------------------------- running
let rng = 0x9e3779b97f4a7c15n;
function rand64(): bigint {
  rng ^= (rng << 13n) & U64; rng ^= rng >> 7n; rng ^= (rng << 17n) & U64;
  return rng;
}
const hx = (b: number): string => b.toString(16).padStart(2, '0');

let shared: Machine | null = null;
let twin: Machine | null = null;
/** Load `code` + hlt at CODE, with registers and rflags set; returns the machine. */
function load(m: Machine, code: string, regs: Record<string, bigint>, rflags: number): void {
  m.mem.writeBytes(CODE, hexBytes(code + ' f4'));
  m.cpu.setPc(BigInt(CODE));
  for (const [k, v] of Object.entries(regs)) setReg(m.cpu, k, v);
  m.cpu.setRflags(rflags);
}

/** flag records the shift may replace: prefix code and number of its instructions */
const PREVS = [
  { name: 'eager', code: '', n: 0 },
  { name: 'cmp', code: '48 39 fe', n: 1 }, // cmp rsi, rdi (F_SUB)
  { name: 'shl', code: '48 39 fe 48 c1 e6 03', n: 2 }, // ... ; shl rsi, 3 (F_SHL)
  { name: 'rol', code: '48 39 fe 48 c1 c6 05', n: 2 }, // ... ; rol rsi, 5 (a rotate on top of F_SUB)
  { name: 'add+ror', code: '48 01 fe 48 d1 ce', n: 2 }, // add rsi, rdi ; ror rsi, 1
];

/**
 * Run prefix + insn; compare with `expect` (given the flags the prefix
 * left, read on a twin machine). Returns a mismatch description or null.
 */
function check(
  desc: string, prefix: typeof PREVS[number], insn: string, regs: Record<string, bigint>, rflagsIn: number,
  expect: (fin: number) => { regs: Record<string, bigint>; mem?: bigint; memSize?: number; f: number }, order: number,
  memInit?: bigint,
): string | null {
  twin ??= machine('f4'); shared ??= machine('f4');
  load(twin, prefix.code, regs, rflagsIn);
  if (prefix.n) twin.cpu.run(prefix.n);
  const fin = twin.cpu.getRflags() & ARITH_MASK;
  const want = expect(fin);
  const { cpu, mem } = shared;
  load(shared, `${prefix.code} ${insn}`, regs, rflagsIn);
  if (memInit !== undefined) for (let i = 0; i < 8; i++) mem.write8(DATA + i, Number((memInit >> BigInt(8 * i)) & 0xffn));
  const r = cpu.run(prefix.n + 1);
  if (r.trap || r.executed !== prefix.n + 1) return `${desc}: ran ${r.executed}, trap ${r.trap?.kind}`;
  for (const [k, v] of Object.entries(want.regs)) {
    const got = getReg(cpu, k);
    if (got !== v) return `${desc}: ${k} = ${got.toString(16)}, want ${v.toString(16)}`;
  }
  if (want.mem !== undefined) {
    let got = 0n;
    for (let k = want.memSize! - 1; k >= 0; k--) got = (got << 8n) | BigInt(mem.read8(DATA + k));
    if (got !== want.mem) return `${desc}: memory = ${got.toString(16)}, want ${want.mem.toString(16)}`;
  }
  if (order === 0) {
    // CF and OF first (a rotate answers them without folding), then every condition code
    if (cpu.cf() !== ((want.f & CF) !== 0)) return `${desc}: CF ${cpu.cf()}, want ${(want.f & CF) !== 0} (fin ${fin.toString(16)})`;
    if (cpu.of() !== ((want.f & OF) !== 0)) return `${desc}: OF ${cpu.of()}, want ${(want.f & OF) !== 0} (fin ${fin.toString(16)})`;
    for (let cc = 0; cc < 16; cc++) {
      if (cpu.cond(cc) !== refCond(cc, want.f)) return `${desc}: cond ${cc} = ${cpu.cond(cc)}, flags want ${want.f.toString(16)} (fin ${fin.toString(16)})`;
    }
    if (cpu.af() !== ((want.f & AF) !== 0)) return `${desc}: AF ${cpu.af()}, want ${(want.f & AF) !== 0}`;
  }
  const f = cpu.getRflags() & ARITH_MASK;
  if (f !== want.f) return `${desc}: flags ${f.toString(16)}, want ${want.f.toString(16)} (fin ${fin.toString(16)}, order ${order})`;
  return null;
}

function valuesFor(size: number): bigint[] {
  const bits = BigInt(size * 8), M = (1n << bits) - 1n, top = 1n << (bits - 1n);
  const vs = [0n, 1n, top, top | 1n, M, M - 1n, 0x5555555555555555n & M, 0xaaaaaaaaaaaaaaaan & M, top >> 1n, 0x80000000n & M, 0x100000000n & M];
  for (let k = 0; k < 5; k++) vs.push(rand64() & M);
  return [...new Set(vs)];
}
function countsFor(size: number): number[] {
  const bits = size * 8;
  return [...new Set([0, 1, 2, 3, 7, bits - 1, bits, bits + 1, 31, 32, 33, 63, 64, 65, 97, 255])];
}

// ---------------------------------------------------------------- shifts and rotates
describe('x86 shift/rotate flags (lazy) vs a BigInt reference', () => {
  for (let n = 0; n < 8; n++) {
    for (const size of [1, 2, 4, 8]) {
      test(`${SH_NAMES[n]} ${size * 8}-bit: counts 0, 1, n, beyond the width and masked; cl / imm8 / 1; register, memory${size === 1 ? ', ah' : ''}`, () => {
        const bits = BigInt(size * 8), M = (1n << bits) - 1n;
        const pre = size === 2 ? '66 ' : size === 8 ? '48 ' : '';
        const failures: string[] = [];
        let k = 0, cases = 0;
        const forms = ['cl', 'imm', 'one', 'mem', ...(size === 1 ? ['ah'] : [])];
        for (const v of valuesFor(size)) {
          for (const raw0 of countsFor(size)) {
            for (const form of forms) {
              if (form === 'one' && raw0 !== 1) continue;
              const raw = raw0;
              const prev = PREVS[k % PREVS.length];
              k++;
              const op1 = size === 1 ? 0 : 1;
              let insn: string;
              const modReg = (rm: number): string => hx(0xc0 | (n << 3) | rm);
              switch (form) {
                case 'cl': insn = `${pre}${hx(0xd2 + op1)} ${modReg(0)}`; break;
                case 'imm': insn = `${pre}${hx(0xc0 + op1)} ${modReg(0)} ${hx(raw)}`; break;
                case 'one': insn = `${pre}${hx(0xd0 + op1)} ${modReg(0)}`; break;
                case 'ah': insn = `d2 ${modReg(4)}`; break;
                default: insn = `${pre}${hx(0xd2 + op1)} ${hx((n << 3) | 3)}`; break; // [rbx]
              }
              const rax0 = rand64();
              const regs: Record<string, bigint> = {
                rax: form === 'mem' ? rax0 : form === 'ah' ? (rax0 & ~0xff00n) | (v << 8n) : (rax0 & ~M) | v,
                rcx: (rand64() & ~0xffn) | BigInt(raw), rbx: BigInt(DATA),
                rsi: rand64(), rdi: k % 3 === 0 ? 0n : rand64(),
              };
              const rflagsIn = Number(rand64() & BigInt(ARITH_MASK)) | 2;
              for (let order = 0; order < 2; order++) {
                const fail = check(`${SH_NAMES[n]}/${size * 8} ${form} v=${v.toString(16)} count=${raw} after ${prev.name}`, prev, insn, regs, rflagsIn, fin => {
                  const { r, f } = refShift(n, size, v, raw, fin);
                  const count = raw & (size === 8 ? 63 : 31);
                  if (form === 'mem') return { regs: { rax: rax0 }, mem: r, memSize: size, f };
                  if (form === 'ah') return { regs: { rax: (regs.rax & ~0xff00n) | (r << 8n) }, f };
                  // a 32-bit register destination is zero-extended, also for a count of 0
                  const rax = size === 8 ? r : size === 4 ? (count === 0 ? regs.rax & M : r) : (regs.rax & ~M) | r;
                  return { regs: { rax }, f };
                }, order, form === 'mem' ? v | (rand64() << bits) : undefined);
                cases++;
                if (fail && failures.length < 8) failures.push(fail);
              }
            }
          }
        }
        assert.ok(cases > 200, `${cases} cases`);
        assert.deepEqual(failures, []);
      });
    }
  }

  test('count 0 (after masking) changes no flag, whatever the record before', () => {
    // cmp rsi, rdi ; shl eax, cl (cl = 32: masked to 0) ; shr rax, 64 (imm, masked to 0) ; rol eax, 0
    for (const [rsi, rdi] of [[1n, 2n], [5n, 5n], [0x8000000000000000n, 1n]]) {
      const { cpu } = machine('48 39 fe d3 e0 48 c1 e8 40 c1 c0 00 f4');
      setReg(cpu, 'rsi', rsi); setReg(cpu, 'rdi', rdi); setReg(cpu, 'rcx', 32n); setReg(cpu, 'rax', 0xffffffff00000003n);
      cpu.run(1);
      const before = cpu.getRflags() & ARITH_MASK;
      cpu.run(3);
      assert.equal(cpu.getRflags() & ARITH_MASK, before);
      assert.equal(getReg(cpu, 'rax'), 3n);
    }
  });

  test('rotates keep SF ZF AF PF of a lazy record, through a chain of rotates and a fold', () => {
    // add esi, edi (AF, PF, ZF from it) ; rol esi, 1 ; ror esi, 1 ; rol esi, 4 ; hlt
    const { cpu } = machine('01 fe d1 c6 d1 ce c1 c6 04 f4');
    setReg(cpu, 'rsi', 0xfffffff8n); setReg(cpu, 'rdi', 8n); // 0xfffffff8 + 8 = 0: ZF PF AF CF
    cpu.run(1);
    const add = cpu.getRflags() & ARITH_MASK;
    assert.equal(add & (ZF | PF | AF | SF), ZF | PF | AF);
    cpu.run(1); // rol 0 -> 0: CF 0 OF 0
    assert.equal(cpu.cf(), false);
    assert.equal(cpu.zf(), true); // folds the rotate and the add into eager bits
    cpu.run(2);
    assert.equal(cpu.getRflags() & ARITH_MASK, ZF | PF | AF);
  });

  test('rcl/rcr keep AF (as the hardware does) and read CF from a lazy shift', () => {
    // shr eax, 1 (CF = 1) ; rcl ebx, 1 ; hlt
    const { cpu } = machine('d1 e8 d1 d3 f4');
    setReg(cpu, 'rax', 3n); setReg(cpu, 'rbx', 0x80000000n);
    cpu.setRflags(AF | 2);
    cpu.run(2);
    // shr clears AF; rcl: 0x80000000 << 1 | CF(1) = 1, CF = 1, OF = 0 ^ 1
    assert.equal(getReg(cpu, 'rbx'), 1n);
    assert.equal(cpu.getRflags() & ARITH_MASK, CF | OF);
    const m2 = machine('d1 d3 f4');
    setReg(m2.cpu, 'rbx', 1n);
    m2.cpu.setRflags(AF | ZF | 2);
    m2.cpu.run(1);
    assert.equal(m2.cpu.getRflags() & ARITH_MASK, AF | ZF);
  });
});

// ---------------------------------------------------------------- imul
const IMUL_EDGES = [
  0n, 1n, -1n, 2n, -2n, 3n, 0x7fffffffn, 0x80000000n, -0x80000000n, 0xffffffffn, 0x100000000n, 0x100000001n, -0x100000000n,
  0xfffffffffn, 3037000499n, 3037000500n, -3037000500n, 0x4000000000000000n, 0x7fffffffffffffffn, -0x8000000000000000n,
  0x5555555555555555n, 6364136223846793005n, 0x123456789n, -0x123456789n,
];

describe('x86 imul (2 and 3 operands) and mul/imul rdx:rax vs a BigInt reference', () => {
  const pairs: [bigint, bigint][] = [];
  for (const a of IMUL_EDGES) for (const b of IMUL_EDGES) pairs.push([a, b]);
  for (let k = 0; k < 200; k++) {
    const a = rand64(), b = rand64();
    pairs.push([a, b], [a >> BigInt(k % 40), b >> BigInt((k * 7) % 40)]);
  }
  // products next to +-2^63: the double estimate cannot decide, the exact product must
  for (const [x, y] of [[1n << 32n, (1n << 31n) - 1n], [1n << 32n, 1n << 31n], [-(1n << 32n), 1n << 31n], [-(1n << 32n), (1n << 31n) + 1n],
    [3n, 3074457345618258602n], [3n, 3074457345618258603n], [-3n, 3074457345618258603n], [-3n, 3074457345618258602n],
    [(1n << 62n), 2n], [(1n << 62n), -2n], [-(1n << 62n), 2n], [-(1n << 62n), -2n], [-(1n << 63n), -1n], [-(1n << 63n), 1n]]) {
    pairs.push([x, y], [y, x]);
  }

  const FORMS = [
    { name: 'imul r64, r64 (fast)', bits: 64, code: '48 0f af c1' },
    { name: 'imul r64, [rbx]', bits: 64, code: '48 0f af 03', mem: true },
    { name: 'imul r32, r32 (fast)', bits: 32, code: '0f af c1' },
    { name: 'imul r32, [rbx]', bits: 32, code: '0f af 03', mem: true },
    { name: 'imul r16, r16', bits: 16, code: '66 0f af c1' },
  ];
  for (const form of FORMS) {
    test(`${form.name}: product and CF/OF (signed overflow of the full product)`, () => {
      const failures: string[] = [];
      const M = (1n << BigInt(form.bits)) - 1n;
      pairs.forEach(([a, b], k) => {
        const prev = PREVS[k % 2];
        const rax0 = BigInt.asUintN(64, a), rcx = BigInt.asUintN(64, b);
        const regs = { rax: rax0, rcx, rbx: BigInt(DATA), rsi: rand64(), rdi: rand64() };
        for (let order = 0; order < 2; order++) {
          const fail = check(`${form.name} ${a} * ${b}`, prev, form.code, regs, 2, () => {
            const { r, f } = refImul(form.bits, rax0 & M, rcx & M);
            const rax = form.bits === 16 ? (rax0 & ~M) | r : r;
            return { regs: { rax }, f };
          }, order, form.mem ? rcx : undefined);
          if (fail && failures.length < 8) failures.push(fail);
        }
      });
      assert.deepEqual(failures, []);
    });
  }

  test('imul r, r/m, imm32 / imm8 at 64, 32 and 16 bits', () => {
    const failures: string[] = [];
    const imms = [0n, 1n, -1n, 2n, 0x7fn, -0x80n, 0x7fffffffn, -0x80000000n, 0x10000n, 6364136n];
    for (const a of IMUL_EDGES) {
      for (const imm of imms) {
        for (const bits of [64, 32, 16]) {
          const M = (1n << BigInt(bits)) - 1n;
          const pre = bits === 16 ? '66 ' : bits === 64 ? '48 ' : '';
          const enc: string[] = [];
          if (imm >= -128n && imm <= 127n) enc.push(`${pre}6b c1 ${hx(Number(BigInt.asUintN(8, imm)))}`);
          const immBytes = bits === 16 ? 2 : 4;
          if (BigInt.asIntN(immBytes * 8, imm) === imm) {
            let s = `${pre}69 c1`;
            for (let i = 0; i < immBytes; i++) s += ' ' + hx(Number((BigInt.asUintN(32, imm) >> BigInt(8 * i)) & 0xffn));
            enc.push(s);
          }
          for (const code of enc) {
            const rax0 = rand64(), rcx = BigInt.asUintN(64, a);
            const fail = check(`${code} rcx=${a}`, PREVS[1], code, { rax: rax0, rcx, rsi: 1n, rdi: 2n }, 2, () => {
              const { r, f } = refImul(bits, rcx & M, BigInt.asUintN(bits, imm));
              return { regs: { rax: bits === 16 ? (rax0 & ~M) | r : r, rcx }, f };
            }, 0);
            if (fail && failures.length < 8) failures.push(fail);
          }
        }
      }
    }
    assert.deepEqual(failures, []);
  });

  test('one-operand mul / imul r64 and r32: rdx:rax exact', () => {
    const failures: string[] = [];
    for (const [a, b] of pairs) {
      for (const [code, bits, signed] of [['48 f7 e9', 64, true], ['48 f7 e1', 64, false], ['f7 e9', 32, true], ['f7 e1', 32, false]] as const) {
        const M = (1n << BigInt(bits)) - 1n;
        const ua = BigInt.asUintN(64, a), ub = BigInt.asUintN(64, b);
        const x = signed ? BigInt.asIntN(bits, ua & M) : ua & M, y = signed ? BigInt.asIntN(bits, ub & M) : ub & M;
        const p = x * y, pu = BigInt.asUintN(2 * bits, p);
        const lo = pu & M, hi = pu >> BigInt(bits);
        const ovf = signed ? BigInt.asIntN(bits, p) !== p : hi !== 0n;
        const fail = check(`${code} ${a} * ${b}`, PREVS[0], code, { rax: ua, rcx: ub, rdx: rand64() }, 2, () =>
          ({ regs: { rax: lo, rdx: hi }, f: szp(BigInt(bits), lo) | (ovf ? CF | OF : 0) }), 1);
        if (fail && failures.length < 8) failures.push(fail);
      }
    }
    assert.deepEqual(failures, []);
  });
});

// ---------------------------------------------------------------- helpers
describe('x86 64-bit multiply helpers are exact', () => {
  const halves = (v: bigint): [number, number] => [Number(BigInt.asIntN(32, v)), Number(BigInt.asIntN(32, v >> 32n))];
  const u32s: number[] = [0, 1, 2, 0xffff, 0x10000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff, 0x80000001, 0xb504f333, 0xb504f334];
  for (let k = 0; k < 2000; k++) u32s.push(Number(rand64() & 0xffffffffn));
  test('umulhi32 (double product, rounded) on edge and random words', () => {
    for (let x = 0; x < u32s.length; x++) {
      for (let y = 0; y < u32s.length; y += 17) {
        const a = u32s[x], b = u32s[(y + x) % u32s.length];
        const want = Number((BigInt(a) * BigInt(b)) >> 32n);
        if (umulhi32(a | 0, b | 0) !== want) assert.fail(`umulhi32(${a.toString(16)}, ${b.toString(16)}) = ${umulhi32(a, b)}, want ${want}`);
      }
    }
    // every high word next to a carry: a * b just below and above a multiple of 2^32
    for (let k = 1; k < 5000; k++) {
      const a = 0xffffffff - k, b = 0xffffffff - (k * 7919) % 65536;
      assert.equal(umulhi32(a | 0, b | 0), Number((BigInt(a) * BigInt(b)) >> 32n));
    }
  });
  test('mulLo64 / mulu64 / muls64 / imulOverflow64 vs BigInt', () => {
    const vals: bigint[] = [...IMUL_EDGES.map(v => BigInt.asUintN(64, v))];
    for (let k = 0; k < 300; k++) { const r = rand64(); vals.push(r, r >> BigInt(k % 64)); }
    for (const a of vals) {
      for (let j = 0; j < vals.length; j += 3) {
        const b = vals[j];
        const [al, ah] = halves(a), [bl, bh] = halves(b);
        const sp = BigInt.asIntN(64, a) * BigInt.asIntN(64, b), up = a * b;
        mulLo64(al, ah, bl, bh);
        assert.deepEqual([MUL_OUT[0], MUL_OUT[1]], halves(up & U64), `mulLo64 ${a} ${b}`);
        mulu64(al, ah, bl, bh);
        assert.deepEqual([...MUL_OUT], [...halves(up & U64), ...halves(up >> 64n)], `mulu64 ${a} ${b}`);
        muls64(al, ah, bl, bh);
        const spu = BigInt.asUintN(128, sp);
        assert.deepEqual([...MUL_OUT], [...halves(spu & U64), ...halves(spu >> 64n)], `muls64 ${a} ${b}`);
        assert.equal(imulOverflow64(al, ah, bl, bh), BigInt.asIntN(64, sp) !== sp, `imulOverflow64 ${a} ${b}`);
      }
    }
  });
});

// ---------------------------------------------------------------- add / sub / cmp with a memory destination
describe('x86 add/sub/cmp m32/m64 (specialised executors) vs a BigInt reference', () => {
  function refAlu(sub: boolean, bits: number, a: bigint, b: bigint): { r: bigint; f: number } {
    const B = BigInt(bits), M = (1n << B) - 1n, sign = (x: bigint): bigint => (x >> (B - 1n)) & 1n;
    const r = (sub ? a - b : a + b) & M;
    const cf = sub ? a < b : a + b > M;
    const of = sub ? sign(a) !== sign(b) && sign(r) !== sign(a) : sign(a) === sign(b) && sign(r) !== sign(a);
    return { r, f: szp(B, r) | (cf ? CF : 0) | (of ? OF : 0) | ((a ^ b ^ r) & 0x10n ? AF : 0) };
  }
  const OPS = [{ name: 'add', reg: 0x01, sub: 0 }, { name: 'sub', reg: 0x29, sub: 5 }, { name: 'cmp', reg: 0x39, sub: 7 }];
  test('m, r and m, imm8 / imm32 at 32 and 64 bits: memory, flags', () => {
    const failures: string[] = [];
    const vals = [0n, 1n, 0x7fffffffn, 0x80000000n, 0xffffffffn, 0x10n, 0xfn, 0x7fffffffffffffffn, 0x8000000000000000n, U64, rand64(), rand64()];
    for (const op of OPS) {
      for (const bits of [32, 64]) {
        const M = (1n << BigInt(bits)) - 1n, pre = bits === 64 ? '48 ' : '';
        for (const a0 of vals) {
          for (const b0 of vals) {
            const a = a0 & M;
            const forms: [string, bigint][] = [[`${pre}${hx(op.reg)} 03`, b0 & M]];
            const i8 = BigInt.asIntN(8, b0), i32 = BigInt.asIntN(32, b0);
            forms.push([`${pre}83 ${hx((op.sub << 3) | 3)} ${hx(Number(BigInt.asUintN(8, i8)))}`, BigInt.asUintN(bits, i8)]);
            let imm = '';
            for (let k = 0; k < 4; k++) imm += ' ' + hx(Number((BigInt.asUintN(32, i32) >> BigInt(8 * k)) & 0xffn));
            forms.push([`${pre}81 ${hx((op.sub << 3) | 3)}${imm}`, BigInt.asUintN(bits, i32)]);
            for (const [code, b] of forms) {
              const high = rand64() << BigInt(bits);
              const fail = check(`${code} [${a.toString(16)}], ${b.toString(16)}`, PREVS[0], code,
                { rax: b0, rbx: BigInt(DATA) }, 2, () => {
                  const { r, f } = refAlu(op.name !== 'add', bits, a, b);
                  return { regs: { rax: b0 }, mem: op.name === 'cmp' ? a : r, memSize: bits / 8, f };
                }, 0, a | high);
              if (fail && failures.length < 8) failures.push(fail);
            }
          }
        }
      }
    }
    assert.deepEqual(failures, []);
  });
  test('a faulting access leaves memory, flags and rip alone', () => {
    // cmp rsi, rdi ; add [rbx], eax (rbx unmapped)
    const { cpu } = machine('48 39 fe 01 03 f4');
    setReg(cpu, 'rsi', 1n); setReg(cpu, 'rdi', 2n); setReg(cpu, 'rbx', 0x10n);
    cpu.run(1);
    const before = cpu.getRflags() & ARITH_MASK;
    const r = cpu.run(1);
    assert.equal(r.trap?.kind, 'pageFault');
    assert.equal(cpu.getPc(), BigInt(CODE + 3));
    assert.equal(cpu.getRflags() & ARITH_MASK, before);
  });
});

// ---------------------------------------------------------------- shld / shrd
describe('x86 shld/shrd flags (lazy at 32/64 bits) vs a BigInt reference', () => {
  /** 16-bit counts > 16 are undefined: the reference takes the 48-bit dst:src:dst pattern, as Intel cores do */
  function refShxd(left: boolean, bits: number, d: bigint, s: bigint, raw: number, fin: number): { r: bigint; f: number } {
    const B = BigInt(bits), M = (1n << B) - 1n, c = BigInt(raw & (bits === 64 ? 63 : 31));
    if (c === 0n) return { r: d, f: fin };
    let r: bigint, cf: bigint;
    if (bits === 16) {
      const cat = (d << 32n) | (s << 16n) | d;
      r = left ? ((cat << c) >> 32n) & M : (cat >> c) & M;
      cf = left ? (cat >> (48n - c)) & 1n : (cat >> (c - 1n)) & 1n;
    } else {
      r = left ? ((d << c) | (s >> (B - c))) & M : ((d >> c) | (s << (B - c))) & M;
      cf = left ? (d >> (B - c)) & 1n : (d >> (c - 1n)) & 1n;
    }
    const of = ((r ^ d) >> (B - 1n)) & 1n;
    return { r, f: szp(B, r) | (cf ? CF : 0) | (of ? OF : 0) };
  }
  for (const left of [true, false]) {
    for (const bits of [16, 32, 64]) {
      test(`${left ? 'shld' : 'shrd'} ${bits}-bit: imm8 / cl, register / same register / memory, counts 0, 1, n, masked`, () => {
        const failures: string[] = [];
        const M = (1n << BigInt(bits)) - 1n, pre = bits === 16 ? '66 ' : bits === 64 ? '48 ' : '';
        const op = left ? 0xa4 : 0xac;
        let k = 0;
        for (const v of valuesFor(bits / 8)) {
          const w = rand64() & M;
          for (const raw of countsFor(bits / 8)) {
            for (const form of ['imm', 'cl', 'same', 'mem']) {
              const prev = PREVS[k++ % PREVS.length];
              const modrm = form === 'same' ? 0xc0 : form === 'mem' ? 0x13 : 0xd0; // rax <- rdx, rax <- rax, [rbx] <- rdx
              const insn = form === 'cl' ? `${pre}0f ${hx(op + 1)} ${hx(modrm)}` : `${pre}0f ${hx(op)} ${hx(modrm)} ${hx(raw)}`;
              const rax0 = (rand64() & ~M) | v;
              const src = form === 'same' ? v : w;
              const regs = { rax: rax0, rdx: (rand64() & ~M) | w, rcx: (rand64() & ~0xffn) | BigInt(raw), rbx: BigInt(DATA), rsi: rand64(), rdi: rand64() };
              for (let order = 0; order < 2; order++) {
                const fail = check(`${insn} d=${v.toString(16)} s=${src.toString(16)} count=${raw} after ${prev.name}`, prev, insn, regs, 2 | (k & 1 ? CF | AF : ZF), fin => {
                  const { r, f } = refShxd(left, bits, v, src, raw, fin);
                  if (form === 'mem') return { regs: { rax: rax0 }, mem: r, memSize: bits / 8, f };
                  const c = raw & (bits === 64 ? 63 : 31);
                  const rax = bits === 64 ? r : bits === 32 ? (c === 0 ? rax0 & M : r) : (rax0 & ~M) | r;
                  return { regs: { rax }, f };
                }, order, form === 'mem' ? v | (rand64() << BigInt(bits)) : undefined);
                if (fail && failures.length < 8) failures.push(fail);
              }
            }
          }
        }
        assert.deepEqual(failures, []);
      });
    }
  }
});
