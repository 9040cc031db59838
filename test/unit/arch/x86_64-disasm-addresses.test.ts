/**
 * x86_64 disassembler, 'addresses' style (the debugger's Disassembly view of
 * kernel code): sign-extended 32-bit immediates and displacements that are
 * kernel addresses print as 64-bit addresses, absolute [disp32] operands
 * print the address they reach, and a symbolizer names them (and branch
 * targets, and RIP-relative operands in llvm's `# 0x... <name>` comment). The
 * 'llvm' style keeps llvm-objdump's text (checked against the goldens in
 * x86_64-decode.test.ts).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from '../../util/paths';
import { disassembleBytes, Symbolizer } from '../../../emulator/arch/x86_64/disasm';
import { x86_64 } from '../../../emulator/arch/x86_64/index';
import { hexBytes } from '../../fixtures/x86/harness';

const AT = 0xffffffff81000000n;
const SYMS = new Map<bigint, string>([
  [0xffffffff81005140n, 'nr_forks'],
  [0xffffffff81003340n, 'sys_call_table'],
  [0xffffffff81001ee0n, 'kprobe_handler'],
  [0xffffffff810055a8n, 'handler_slot'],
  [0xffffffff81001000n, 'do_fork'],
]);
const symbolize: Symbolizer = a => SYMS.get(a);

function text(hb: string, opts?: Parameters<typeof disassembleBytes>[2]): string {
  const d = disassembleBytes(hexBytes(hb), AT, opts);
  assert.ok(d, `${hb} decodes`);
  return `${d.mnemonic} ${d.operands}`;
}

describe('x86 disassembly: addresses style', () => {
  const cases: [string, string, string, string, string][] = [
    // bytes, llvm, addresses, addresses + symbolizer
    ['mov r64, imm32 sign-extended', '48 c7 c6 40 51 00 81',
      'mov rsi, -0x7effaec0', 'mov rsi, 0xffffffff81005140', 'mov rsi, 0xffffffff81005140 <nr_forks>'],
    ['small negative constants stay signed', '48 c7 c0 ea ff ff ff', 'mov rax, -0x16', 'mov rax, -0x16', 'mov rax, -0x16'],
    ['-0x1000000 and below are addresses only from the kernel mappings down', '48 c7 c0 00 00 00 ff',
      'mov rax, -0x1000000', 'mov rax, 0xffffffffff000000', 'mov rax, 0xffffffffff000000'],
    ['arithmetic with a negative imm32 is not an address', '48 81 e4 00 00 00 80',
      'and rsp, -0x80000000', 'and rsp, -0x80000000', 'and rsp, -0x80000000'],
    ['movabs of a kernel address', '48 b8 40 51 00 81 ff ff ff ff',
      'movabs rax, -0x7effaec0', 'movabs rax, 0xffffffff81005140', 'movabs rax, 0xffffffff81005140 <nr_forks>'],
    ['push imm32', '68 40 51 00 81', 'push -0x7effaec0', 'push 0xffffffff81005140', 'push 0xffffffff81005140 <nr_forks>'],
    ['absolute [disp32] (SIB, no base, no index)', '48 8b 04 25 40 51 00 81',
      'mov rax, qword ptr [0x81005140]', 'mov rax, qword ptr [0xffffffff81005140]',
      'mov rax, qword ptr [0xffffffff81005140 <nr_forks>]'],
    ['absolute [disp32] with the 67 prefix is zero-extended', '67 8b 04 25 40 51 00 81',
      'mov eax, dword ptr [0x81005140]', 'mov eax, dword ptr [0x81005140]', 'mov eax, dword ptr [0x81005140]'],
    ['an indexed table at a kernel address', '48 8b 34 cd 40 33 00 81',
      'mov rsi, qword ptr [8*rcx - 0x7effccc0]', 'mov rsi, qword ptr [8*rcx + 0xffffffff81003340]',
      'mov rsi, qword ptr [8*rcx + 0xffffffff81003340 <sys_call_table>]'],
    ['base + small displacement unchanged', '48 8b 45 f8',
      'mov rax, qword ptr [rbp - 0x8]', 'mov rax, qword ptr [rbp - 0x8]', 'mov rax, qword ptr [rbp - 0x8]'],
    ['rip-relative store of a function address', '48 c7 05 9d 55 00 00 e0 1e 00 81',
      'mov qword ptr [rip + 0x559d], -0x7effe120', 'mov qword ptr [rip + 0x559d], 0xffffffff81001ee0',
      'mov qword ptr [rip + 0x559d], 0xffffffff81001ee0 <kprobe_handler>  # 0xffffffff810055a8 <handler_slot>'],
    ['call rel32', 'e8 fb 0f 00 00', 'call 0xffffffff81001000', 'call 0xffffffff81001000', 'call 0xffffffff81001000 <do_fork>'],
    ['an unnamed target gets no suffix', 'e8 00 00 00 00', 'call 0xffffffff81000005', 'call 0xffffffff81000005', 'call 0xffffffff81000005'],
  ];
  for (const [name, hb, llvm, addresses, named] of cases) {
    test(`${name}: ${hb}`, () => {
      assert.equal(text(hb, { style: 'llvm' }), llvm, 'llvm');
      assert.equal(text(hb), addresses, 'addresses (default)');
      assert.equal(text(hb, { symbolize }), named, 'with the symbolizer');
      assert.equal(text(hb, { style: 'llvm', symbolize }), llvm, 'the llvm style ignores the symbolizer');
    });
  }

  test('the arch table (ArchOps.decodeBytes) gives the addresses style', () => {
    const d = x86_64.decodeBytes(hexBytes('48 c7 c6 40 51 00 81'), AT);
    assert.equal(d?.operands, 'rsi, 0xffffffff81005140');
  });

  test('no instruction of the kernel golden shows a kernel address as a negative number', () => {
    const golden = readFileSync(repoPath('test/fixtures/x86/disasm/kernel-x86_64.txt'), 'utf8');
    let converted = 0;
    const negative: string[] = [];
    for (const line of golden.split('\n')) {
      if (!line) continue;
      const [a, hb, , ops] = line.split('\t');
      const d = disassembleBytes(hexBytes(hb), BigInt('0x' + a));
      assert.ok(d);
      if (/-0x7e/.test(d.operands) && negative.length < 5) negative.push(`${a}: ${d.operands}`);
      if (/-0x7e/.test(ops ?? '') && /0xffffffff8/.test(d.operands)) converted++;
    }
    assert.deepEqual(negative, []);
    assert.ok(converted > 50, `${converted} instructions print kernel addresses`);
  });

  test('bytes that do not decode, or a non-canonical address: null', () => {
    assert.equal(disassembleBytes(hexBytes('0f 0f'), AT), null);
    assert.equal(disassembleBytes(hexBytes('90'), 0x8000000000000000n), null);
  });
});
