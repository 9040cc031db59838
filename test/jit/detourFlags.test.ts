/**
 * The flags slot of a native entry's frame as translated code writes it
 * (emulator/arch/x86_64/jit.ts nativeEntry, jitEmitter.ts arithFlagsOrNot):
 * after each kind of flag producer an optimized probe's entry or a
 * function's return can follow (add, sub, cmp, logic, inc, dec, shr, sar,
 * and flags loaded whole by popf), the slot holds exactly the arithmetic
 * flags the interpreter's lazy record gives (CF PF AF ZF SF OF), for
 * operands at every size and at the edges (0, 1, sign bits, carries out of
 * bit 3); after the other kinds (shl, rol, imul, adc) it says "not
 * evaluated" in its high word, and the owner evaluates them
 * (kprobes/nativeFrame.ts nativeEnter).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { x86_64 } from '../../emulator/arch/x86_64/index';
import type { X86Cpu, NativeEntrySave } from '../../emulator/arch/x86_64/cpu';
import { ARITH_MASK } from '../../emulator/arch/x86_64/flags';
import { FLAGS_NOT_EVALUATED_HI } from '../../emulator/arch/x86_64/jitEmitter';
import { translatorFor, type FrontEnd } from '../../emulator/jit';
import type { NativeEntryRoute } from '../../emulator/cpu/interp';
import { JIT_HOT_ARRIVALS_LOCKSTEP } from '../../emulator/cpu/interp';
import { CODE, DATA, hexBytes, machine } from '../fixtures/x86/harness';

/** the frame's layout (the kprobes templates' slots; the entry resumes at the instruction after its int3) */
const LAYOUT: NativeEntrySave = {
  frameBytes: { optprobe: 21 * 8, kretprobe: 20 * 8 },
  gprs: [15, 14, 13, 12, 5, 3, 11, 10, 9, 8, 0, 1, 2, 6, 7],
  origAx: 15 * 8, ip: 16 * 8, cs: 17 * 8, flags: 18 * 8, sp: 19 * 8, ss: 20 * 8,
  kernelCs: 0x10, kernelDs: 0x18, optResume: 1,
};

/** operand pairs: the edges of every size, then pseudo-random values */
function operands(): bigint[] {
  const edges = [0n, 1n, 2n, 0xfn, 0x10n, 0x7fn, 0x80n, 0xffn, 0x7fffn, 0x8000n, 0xffffn, 0x7fffffffn, 0x80000000n, 0xffffffffn,
    0x7fffffffffffffffn, 0x8000000000000000n, 0xffffffffffffffffn];
  const out: bigint[] = [];
  for (const a of edges) for (const b of [0n, 1n, 0xffffffffffffffffn, 0x8000000000000000n, 0x80n, 0x10n]) out.push(a, b);
  let s = 0x9e3779b97f4a7c15n;
  while (out.length < 2 * 256) {
    s = (s * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn;
    out.push(s >> BigInt(Number(s & 63n)));
  }
  return out;
}

interface Seen { slotLo: number; slotHi: number; flags: number }

/**
 * Runs `producer` (hex; rax op rbx) on each operand pair, then the native
 * entry's int3, translated; what the entry's frame held at each translated
 * hit, with the interpreter's arithmetic flags at that point.
 */
function run(producer: string): Seen[] {
  const ops = operands();
  const prod = hexBytes(producer);
  const head = hexBytes('48 8b 07 48 8b 5f 08'); // mov rax, [rdi]; mov rbx, [rdi + 8]
  const tail = hexBytes('48 83 c7 10 48 ff c9'); // add rdi, 16; dec rcx
  const loopLen = head.length + prod.length + 1 + tail.length + 2;
  const code = Uint8Array.from([...head, ...prod, 0xcc, ...tail, 0x75, (256 - loopLen) & 0xff, 0xf4]); // jnz loop; hlt
  const entry = CODE + head.length + prod.length;
  const { mem, cpu } = machine(code);
  const data = new Uint8Array(ops.length * 8);
  ops.forEach((v, k) => { for (let j = 0; j < 8; j++) data[8 * k + j] = Number((v >> BigInt(8 * j)) & 0xffn); });
  mem.writeBytes(DATA, data);
  cpu.lo[7] = DATA; // rdi
  cpu.lo[1] = ops.length / 2; // rcx
  const seen: Seen[] = [];
  const handler = (c: X86Cpu): boolean => {
    c.rip = entry + LAYOUT.optResume;
    return true;
  };
  const route: NativeEntryRoute<X86Cpu> = {
    kind: 'optprobe', ip: entry + 1, handler: (c, _at) => handler(c),
    // a translated hit: the frame below rsp was written by translated code
    hit: c => {
      const sp = c.hi[4] * 4294967296 + (c.lo[4] >>> 0);
      const slot = sp - LAYOUT.frameBytes.optprobe + LAYOUT.flags;
      seen.push({ slotLo: c.mem.read32(slot), slotHi: c.mem.read32(slot + 4), flags: c.getRflags() & ARITH_MASK });
      return handler(c);
    },
  };
  cpu.nativeEntryAt = at => (at === entry ? route : null);
  cpu.nativeSave = LAYOUT;
  cpu.inlineBreakpoint = route.handler;
  const t = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, 'on');
  assert.ok(t !== null, 'the translator is available');
  t.hotArrivals = JIT_HOT_ARRIVALS_LOCKSTEP;
  (cpu as unknown as { jit: unknown }).jit = t;
  let r = cpu.run(100_000);
  for (let k = 0; k < 100 && r.trap === null && cpu.lo[1] !== 0; k++) r = cpu.run(100_000);
  assert.equal(cpu.lo[1], 0, 'the loop ran to its end');
  assert.ok(seen.length > 200, `translated hits: ${seen.length}`);
  return seen;
}

describe('x86_64 native entry: the flags slot translated code writes', () => {
  const EVALUATED: Record<string, string> = {
    'add rax, rbx': '48 01 d8', 'add eax, ebx': '01 d8', 'add al, bl': '00 d8',
    'sub rax, rbx': '48 29 d8', 'cmp eax, ebx': '39 d8', 'cmp ax, bx': '66 39 d8', 'sub bl, al': '28 c3',
    'and al, bl': '20 d8', 'xor rax, rbx': '48 31 d8', 'test ax, bx': '66 85 d8', 'or eax, ebx': '09 d8',
    'inc rax': '48 ff c0', 'dec eax': 'ff c8', 'inc al': 'fe c0', 'dec ax': '66 ff c8',
    'shr rax, 5': '48 c1 e8 05', 'shr rax, 63': '48 c1 e8 3f', 'shr eax, 1': 'd1 e8', 'shr al, 7': 'c0 e8 07',
    'sar rax, 7': '48 c1 f8 07', 'sar al, 3': 'c0 f8 03', 'sar ax, 15': '66 c1 f8 0f', 'sar eax, 31': 'c1 f8 1f',
    // popf: an eager record (rbx masked to the arithmetic flags: TF, DF, IF stay as they are)
    'popf (eager)': '48 81 e3 d5 08 00 00 53 9d',
  };
  for (const [name, hex] of Object.entries(EVALUATED)) {
    test(`${name}: the arithmetic flags, as the interpreter evaluates them`, () => {
      const seen = run(hex);
      for (const [k, s] of seen.entries()) {
        assert.equal(s.slotHi, 0, `hit ${k}: evaluated`);
        assert.equal(s.slotLo, s.flags, `hit ${k}: 0x${s.slotLo.toString(16)} against 0x${s.flags.toString(16)}`);
      }
    });
  }
  const LEFT: Record<string, string> = {
    'shl rax, 3': '48 c1 e0 03', 'rol rax, 7': '48 c1 c0 07', 'imul rax, rbx': '48 0f af c3', 'adc rax, rbx': '48 11 d8',
  };
  for (const [name, hex] of Object.entries(LEFT)) {
    test(`${name}: left to the owner (the high word says so)`, () => {
      for (const [k, s] of run(hex).entries()) assert.equal(s.slotHi, FLAGS_NOT_EVALUATED_HI, `hit ${k}`);
    });
  }
});
