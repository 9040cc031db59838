/**
 * The x86_64 front end (emulator/arch/x86_64/jit.ts): every x86_64
 * conformance program (except the long-running loopbench) runs with the
 * translator in lockstep (each exit of translated code compared with the
 * interpreter: registers, rflags from the lazy record, counts, memory) and
 * prints and exits exactly as with the interpreter alone; the translated
 * code retired instructions of its own. Plus which instructions the front
 * end emits itself and which it leaves to the interpreter's executors.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { runUser } from '../fixtures/kernel/harness';
import { allTranslators } from '../../emulator/jit';
import { IrBuilder } from '../../emulator/jit/ir';
import { x86FrontEnd } from '../../emulator/arch/x86_64/jit';
import { decodeInsn } from '../../emulator/arch/x86_64/decoder';
import type { Insn } from '../../emulator/arch/x86_64/insn';
import type { X86Cpu } from '../../emulator/arch/x86_64/cpu';

const BIN = 'test/conformance/bin';
const programs = readdirSync(repoPath(BIN)).filter(f => f.endsWith('.elf') && !f.startsWith('loopbench')).sort();

function translatedInsns(): number {
  return allTranslators().get('x86_64:lockstep')?.stats.translatedInsns ?? 0;
}

describe('x86_64 front end: lockstep against the interpreter', () => {
  test('there are programs to run', () => {
    assert.ok(programs.length >= 40, `only ${programs.length} programs in ${BIN}`);
  });
  for (const f of programs) {
    test(f.slice(0, -'.elf'.length), () => {
      const path = `${BIN}/${f}`;
      const off = runUser(path, [path], { translate: 'off' });
      const before = translatedInsns();
      const on = runUser(path, [path], { translate: 'lockstep' });
      assert.equal(on.stderr, off.stderr);
      assert.equal(on.stdout.toString('latin1'), off.stdout.toString('latin1'));
      assert.deepEqual(on.exit, off.exit);
      assert.equal(on.machine.totalInstructions, off.machine.totalInstructions);
      assert.ok(translatedInsns() > before, 'instructions ran translated');
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
    'imul rax, rbx': '48 0f af c3', 'imul eax, [rdi], 12': '6b 07 0c',
    'shl rax, 3': '48 c1 e0 03', 'sar ecx, 1': 'd1 f9', 'shr byte [rdi], 2': 'c0 2f 02', 'rol rax, 7': '48 c1 c0 07',
    'shld rax, rdx, 7': '48 0f a4 d0 07',
    'cmovl eax, ecx': '0f 4c c1', 'sete al': '0f 94 c0', 'push rbx': '53', 'pop rbp': '5d', 'push 1': '6a 01',
    'leave': 'c9', 'cdqe': '48 98', 'cqo': '48 99', 'xchg eax, ecx': '91', 'nop dword [rax]': '0f 1f 40 00',
    'endbr64': 'f3 0f 1e fa', 'jmp rel8': 'eb 10', 'jne rel32': '0f 85 00 01 00 00', 'call rel32': 'e8 00 01 00 00',
  };
  const HELPER: Record<string, string> = {
    'ret': 'c3', 'div rcx': '48 f7 f1', 'adc rax, rbx': '48 11 d8', 'rcl eax, 1': 'd1 d0', 'shl eax, cl': 'd3 e0',
    'mov eax, fs:[0]': '64 8b 04 25 00 00 00 00', 'mov eax, [ebx] (67)': '67 8b 03', 'lock add [rdi], eax': 'f0 01 07',
    'jmp rax': 'ff e0', 'syscall': '0f 05', 'movs (string)': 'a4', 'bt eax, ecx': '0f a3 c8', 'mul rcx': '48 f7 e1',
  };
  for (const [name, hex] of Object.entries(NATIVE)) test(`native: ${name}`, () => assert.equal(native(hex), true));
  for (const [name, hex] of Object.entries(HELPER)) test(`helper: ${name}`, () => assert.equal(native(hex), false));
});
