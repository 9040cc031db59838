/**
 * The x86_64 front end (emulator/arch/x86_64/jit.ts): four representative
 * x86_64 conformance programs (npm test runs all of them again through the
 * differential suite under KPROBE_TRANSLATE=lockstep) run with the
 * translator in lockstep (each exit of translated code compared with the
 * interpreter: registers, rflags from the lazy record, counts, memory) and
 * print and exit exactly as with the interpreter alone; the translated code
 * retired instructions of its own. A hand-assembled loop of call / ret /
 * jmp r / call r / call [m], in lockstep and translated alone, against the
 * interpreter, ending in each of those to a non-canonical target (the
 * interpreter's #GP, state unchanged) or a push with a non-canonical rsp.
 * FS / GS-relative loads and stores (their bases added; lea ignores them) in
 * a loop, against the interpreter. Plus which
 * instructions the front end emits itself and which it leaves to the
 * interpreter's executors.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { assertLockstepMatches } from '../fixtures/jitLockstep';
import { IrBuilder } from '../../emulator/jit/ir';
import { x86FrontEnd } from '../../emulator/arch/x86_64/jit';
import { decodeInsn } from '../../emulator/arch/x86_64/decoder';
import type { Insn } from '../../emulator/arch/x86_64/insn';
import type { X86Cpu } from '../../emulator/arch/x86_64/cpu';
import { x86_64 } from '../../emulator/arch/x86_64/index';
import { translatorFor } from '../../emulator/jit';
import { JIT_HOT_ARRIVALS_LOCKSTEP } from '../../emulator/cpu/interp';
import type { FrontEnd } from '../../emulator/jit';
import { machine, CODE, DATA } from '../fixtures/x86/harness';
import { PERM_R, PERM_W } from '../../emulator/memory/memory';
import type { RunResult } from '../../emulator/arch/types';

const BIN = 'test/conformance/bin';
/** a loop-heavy -O2 build, an -O0 build, recursion (call / ret), string and flag code */
const PROGRAMS = ['intops-gcc-O2.elf', 'control-clang-O0.elf', 'recursion-gcc-O2.elf', 'strings-clang-Os.elf'];
const present = new Set(readdirSync(repoPath(BIN)));

describe('x86_64 front end: lockstep against the interpreter', () => {
  test('the programs are there', () => {
    for (const f of PROGRAMS) assert.ok(present.has(f), `${BIN}/${f}`);
  });
  for (const f of PROGRAMS) {
    test(f.slice(0, -'.elf'.length), () => {
      assertLockstepMatches('x86_64', `${BIN}/${f}`);
    });
  }
});

/** true when the front end emits the instruction (hex bytes) itself, false when it leaves it to a helper */
function native(hex: string): boolean {
  const bytes = Buffer.from(hex.replace(/ /g, ''), 'hex');
  const insn = decodeInsn(k => bytes[k], 0x401000) as Insn;
  assert.ok(insn, `${hex} decodes`);
  assert.equal(insn.len, bytes.length, `${hex}: one instruction`);
  const b = new IrBuilder<Insn>(insn.addr);
  b.begin(insn, insn.addr, insn.next);
  return x86FrontEnd.emit(b, insn, null as unknown as X86Cpu);
}

describe('x86_64 front end: native and helper instructions', () => {
  const NATIVE: Record<string, string> = {
    'mov rax, rbx': '48 89 d8', 'mov eax, [rbx+rcx*4+8]': '8b 44 8b 08', 'mov [rsp+8], rdi': '48 89 7c 24 08',
    'mov al, ah': '88 e0', 'mov ax, 5': '66 b8 05 00', 'movabs rax, imm64': '48 b8 88 77 66 55 44 33 22 11',
    'mov rax, [rip+16]': '48 8b 05 10 00 00 00', 'lea rax, [rdi+rsi*8-4]': '48 8d 44 f7 fc',
    'movzx eax, byte [rdi]': '0f b6 07', 'movsx rax, word [rdi]': '48 0f bf 07', 'movsxd rax, edi': '48 63 c7',
    'add rax, rbx': '48 01 d8', 'sub dword [rdi], 1': '83 2f 01', 'cmp al, 0x7f': '3c 7f', 'test edi, edi': '85 ff',
    'xor eax, eax': '31 c0', 'and rax, [rdi]': '48 23 07', 'or cx, 0x100': '66 81 c9 00 01',
    'inc eax': 'ff c0', 'dec qword [rdi]': '48 ff 0f', 'neg rax': '48 f7 d8', 'not ecx': 'f7 d1',
    'mov eax, fs:[0]': '64 8b 04 25 00 00 00 00', 'mov [gs:rbx], rax': '65 48 89 03', 'jmp fs:[rax]': '64 ff 20', 'ret (fs)': '64 c3',
    'imul rax, rbx': '48 0f af c3', 'imul eax, [rdi], 12': '6b 07 0c',
    'shl rax, 3': '48 c1 e0 03', 'sar ecx, 1': 'd1 f9', 'shr byte [rdi], 2': 'c0 2f 02', 'rol rax, 7': '48 c1 c0 07',
    'shld rax, rdx, 7': '48 0f a4 d0 07',
    'cmovl eax, ecx': '0f 4c c1', 'sete al': '0f 94 c0', 'push rbx': '53', 'pop rbp': '5d', 'push 1': '6a 01',
    'leave': 'c9', 'cdqe': '48 98', 'cqo': '48 99', 'xchg eax, ecx': '91', 'nop dword [rax]': '0f 1f 40 00',
    'endbr64': 'f3 0f 1e fa', 'jmp rel8': 'eb 10', 'jne rel32': '0f 85 00 01 00 00', 'call rel32': 'e8 00 01 00 00',
    'ret': 'c3', 'ret 8': 'c2 08 00', 'ret (66)': '66 c3', 'rep ret': 'f3 c3', 'ret 8 (66)': '66 c2 08 00', 'jmp rax': 'ff e0', 'jmp r11': '41 ff e3', 'jmp [rax+8]': 'ff 60 08',
    'jmp [rip+16]': 'ff 25 10 00 00 00', 'call rax': 'ff d0', 'call r11': '41 ff d3', 'call [rbx+rcx*8]': 'ff 14 cb',
    'lock add [rdi], eax': 'f0 01 07', 'lock inc qword [rdi]': 'f0 48 ff 07', 'lock or dword [rdi+16], ecx': 'f0 09 4f 10',
  };
  const HELPER: Record<string, string> = {
    'div rcx': '48 f7 f1', 'adc rax, rbx': '48 11 d8', 'rcl eax, 1': 'd1 d0', 'shl eax, cl': 'd3 e0',
    'mov eax, [ebx] (67)': '67 8b 03', 'lock add eax, ecx (#UD: no memory destination)': 'f0 01 c8', 'lock mov [rdi], eax (#UD: not lockable)': 'f0 89 07',
    'call [eax] (67)': '67 ff 10', 'syscall': '0f 05', 'movs (string)': 'a4', 'bt eax, ecx': '0f a3 c8', 'mul rcx': '48 f7 e1',
  };
  for (const [name, hex] of Object.entries(NATIVE)) test(`native: ${name}`, () => assert.equal(native(hex), true));
  for (const [name, hex] of Object.entries(HELPER)) test(`helper: ${name}`, () => assert.equal(native(hex), false));
});

/**
 * main: rax = f1, rbx = f2, rcx = 1000, [DATA] = f1; loop: call rax (f1:
 * add rdx, 1; ret); push 7; call f3 (add rdx, 3; jmp rbx -> f2: add rdx, 2;
 * ret 8); call [rip -> DATA]; dec rcx; jne loop. Then (at 0x23, run once by
 * the interpreter) a tail that makes one of the now translated transfers
 * go to a non-canonical address and jumps back into it.
 */
const MAIN = 'b8 00 01 40 00  bb 00 02 40 00  b9 e8 03 00 00'
  + ' ff d0  6a 07  e8 e8 02 00 00  ff 15 e2 ff 1f 00  48 ff c9  75 ec';
const F1 = 0x100, F2 = 0x200, F3 = 0x300;
const BAD = '00 00 00 00 00 80 00 00'; // 0x0000800000000000: not canonical
const TAILS: Record<string, { code: string; trapAt: number }> = {
  // movabs rsi, BAD; push rsi; jmp f1 (its ret returns to BAD)
  'ret to a non-canonical address': { code: `48 be ${BAD} 56 e9 cd 00 00 00`, trapAt: F1 + 4 },
  // movabs rbx, BAD; jmp f3 (its jmp rbx)
  'jmp r to a non-canonical address': { code: `48 bb ${BAD} e9 ce 02 00 00`, trapAt: F3 + 4 },
  // movabs rax, BAD; jmp loop (its call rax)
  'call r to a non-canonical address': { code: `48 b8 ${BAD} e9 dd ff ff ff`, trapAt: 0x0f },
  // movabs rax, BAD; mov [DATA], rax; jmp 0x18 (its call [rip -> DATA])
  'call [m] to a non-canonical address': { code: `48 b8 ${BAD} 48 89 04 25 00 00 60 00 e9 de ff ff ff`, trapAt: 0x18 },
  // movabs rsp, 2^47; jmp 0x11 (push 7: rsp not canonical although rsp - 8 is, and mapped here)
  'push with a non-canonical rsp': { code: `48 bc ${BAD} e9 df ff ff ff`, trapAt: 0x11 },
};

type Mode = 'lockstep' | 'on' | 'off';
function callRetMachine(tail: string, mode: Mode): X86Cpu {
  const code = new Uint8Array(0x400);
  code.set(Buffer.from((MAIN + tail).replace(/ /g, ''), 'hex'));
  code.set(Buffer.from('4883c201c3', 'hex'), F1); // add rdx, 1; ret
  code.set(Buffer.from('4883c202c20800', 'hex'), F2); // add rdx, 2; ret 8
  code.set(Buffer.from('4883c203ffe3', 'hex'), F3); // add rdx, 3; jmp rbx
  const { mem, cpu } = machine(code);
  mem.writeBytes(DATA, Uint8Array.of(0x00, 0x01, 0x40, 0, 0, 0, 0, 0));
  // the page below 2^47: a push with rsp = 2^47 must not store there
  mem.map(0x7ffffffff000, 0x1000, PERM_R | PERM_W, 'top');
  const t = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, mode);
  // short loops: translated after as few arrivals as in lockstep (the default waits for JIT_HOT_ARRIVALS)
  if (t) t.hotArrivals = JIT_HOT_ARRIVALS_LOCKSTEP;
  (cpu as unknown as { jit: unknown }).jit = t;
  return cpu;
}

function cpuState(cpu: X86Cpu): string {
  const ctx = cpu.saveContext();
  return JSON.stringify({ lo: [...ctx.lo], hi: [...ctx.hi], rip: ctx.rip, rflags: ctx.rflags, instret: cpu.instret }, (_k, v) => typeof v === 'bigint' ? v.toString() : v);
}

/*
 * Both in lockstep (every exit compared) and translated alone against the
 * interpreter: a lockstep replay in which the interpreter faults where the
 * translated code went on reports that fault as the guest's, so only the
 * run without lockstep shows such a difference.
 */
describe('x86_64 front end: call / ret / jmp r / call r against the interpreter', () => {
  for (const [name, tail] of Object.entries(TAILS)) for (const mode of ['lockstep', 'on'] as const) {
    test(`${name} (${mode})`, () => {
      const t = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, mode);
      assert.ok(t !== null, 'the translator is available');
      const before = t.stats.translatedInsns, checked = t.stats.lockstepChecked;
      const a = callRetMachine(tail.code, mode), b = callRetMachine(tail.code, 'off');
      let ra: RunResult = { executed: 0, trap: null }, rb: RunResult;
      // budgets that end at many different places in the loop
      for (let k = 0; k < 200 && ra.trap === null; k++) {
        ra = a.run(97); rb = b.run(97);
        assert.deepEqual(ra, rb, `run ${k}`);
        assert.equal(cpuState(a), cpuState(b), `state after run ${k}`);
      }
      assert.equal(ra.trap?.kind, 'generalProtection');
      assert.equal(ra.trap?.pc, BigInt(CODE + tail.trapAt));
      assert.equal(a.mem.read32(0x7ffffffff000 + 0xff8), 0, 'nothing stored below 2^47');
      assert.ok(t.stats.translatedInsns - before > 5000, 'the loop ran translated');
      if (mode === 'lockstep') assert.ok(t.stats.lockstepChecked > checked, 'translated entries were compared');
    });
  }
});

describe('x86_64 front end: LOCK-prefixed read-modify-writes against the interpreter', () => {
  // loop: lock add [rbx], rcx; lock inc qword [rbx+8]; lock or dword [rbx+16], ecx; lock sub [rbx+24], rcx; dec rcx; jnz loop; hlt
  const LOOP = 'f0 48 01 0b  f0 48 ff 43 08  f0 09 4b 10  f0 48 29 4b 18  48 ff c9  75 e9  f4';
  for (const mode of ['lockstep', 'on'] as const) {
    test(`lock add / inc / or / sub on memory (${mode})`, () => {
      const t = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, mode);
      assert.ok(t !== null, 'the translator is available');
      const before = t.stats.translatedInsns;
      const make = (m: Mode): X86Cpu => {
        const { cpu } = machine(LOOP);
        cpu.lo[3] = DATA; // rbx
        cpu.lo[1] = 1000; // rcx
        const tr = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, m);
        if (tr) tr.hotArrivals = JIT_HOT_ARRIVALS_LOCKSTEP;
        (cpu as unknown as { jit: unknown }).jit = tr;
        return cpu;
      };
      const a = make(mode), b = make('off');
      let ra: RunResult = { executed: 0, trap: null }, rb: RunResult;
      for (let k = 0; k < 200 && ra.trap === null; k++) {
        ra = a.run(97); rb = b.run(97);
        assert.deepEqual(ra, rb, `run ${k}`);
        assert.equal(cpuState(a), cpuState(b), `state after run ${k}`);
      }
      assert.notEqual(ra.trap, null, 'the loop ended');
      assert.deepEqual(a.mem.readBytes(DATA, 32), b.mem.readBytes(DATA, 32));
      assert.equal(a.mem.read32(DATA), 1000 * 1001 / 2, 'lock add: the sum of rcx');
      assert.equal(a.mem.read32(DATA + 8), 1000, 'lock inc: one a round');
      assert.ok(t.stats.translatedInsns - before > 5000, 'the loop ran translated');
    });
  }
});

describe('x86_64 front end: FS / GS-relative accesses against the interpreter', () => {
  // loop: mov rax, fs:[8]; mov gs:[rbx+rcx*8], rax; lea rdx, fs:[rbx+rcx*8+16] (no base: lea ignores segments); add rsi, rdx; dec rcx; jnz loop; hlt
  const LOOP = '64 48 8b 04 25 08 00 00 00  65 48 89 04 cb  64 48 8d 54 cb 10  48 01 d6  48 ff c9  75 e4  f4';
  for (const mode of ['lockstep', 'on'] as const) {
    test(`loads and stores at the segment bases, lea without them (${mode})`, () => {
      const t = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, mode);
      assert.ok(t !== null, 'the translator is available');
      const before = t.stats.translatedInsns;
      const make = (m: Mode): X86Cpu => {
        const { mem, cpu } = machine(LOOP);
        mem.writeBytes(DATA + 8, Uint8Array.of(0x78, 0x56, 0x34, 0x12, 0, 0, 0, 0x80));
        cpu.fsBase = DATA; cpu.gsBase = DATA + 0x1000;
        cpu.lo[1] = 1000; // rcx
        const tr = translatorFor('x86_64', x86_64.jit as FrontEnd<unknown, never>, m);
        if (tr) tr.hotArrivals = JIT_HOT_ARRIVALS_LOCKSTEP;
        (cpu as unknown as { jit: unknown }).jit = tr;
        return cpu;
      };
      const a = make(mode), b = make('off');
      let ra: RunResult = { executed: 0, trap: null }, rb: RunResult;
      for (let k = 0; k < 200 && ra.trap === null; k++) {
        ra = a.run(97); rb = b.run(97);
        assert.deepEqual(ra, rb, `run ${k}`);
        assert.equal(cpuState(a), cpuState(b), `state after run ${k}`);
      }
      assert.notEqual(ra.trap, null, 'the loop ended');
      assert.deepEqual(a.mem.readBytes(DATA + 0x1000, 8 * 1001), b.mem.readBytes(DATA + 0x1000, 8 * 1001));
      assert.equal(a.mem.read32(DATA + 0x1000 + 8 * 1000), 0x12345678, 'stored at gs:[rcx*8]');
      assert.equal(a.lo[6] >>> 0, (1000 * 1001 / 2 * 8 + 1000 * 16) >>> 0, 'rsi: the sum of the lea offsets (no fs base)');
      assert.ok(t.stats.translatedInsns - before > 3000, 'the loop ran translated');
    });
  }
});
