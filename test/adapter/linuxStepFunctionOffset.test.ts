/**
 * Function breakpoints of the Linux machine name `function+offset` as
 * Linux's kprobes do (decimal or 0x hex): the step-in test puts one on a
 * call inside do_sys_openat2. Checked here on the sample kernel's ELF (any
 * image with function symbols serves the symbol lookup): the address is
 * the function's plus the offset; an offset past the function's end and
 * an unknown function are refused with what is wrong.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LinuxBreakpoints, type LinuxBreakpointHost } from '../../emulator/debug/linuxBreakpoints';
import { sampleImage } from '../kprobes/harness';

test('function breakpoints on the Linux machine take function+offset inside the function, and say why not otherwise', () => {
  const image = sampleImage('x86_64');
  const fn = image.symbols.functions().find(f => f.size > 0x10n)!;
  assert.ok(fn, 'a function of more than 16 bytes in the sample kernel');
  const b = new LinuxBreakpoints({ vmlinux: image } as LinuxBreakpointHost, () => []);
  assert.equal(b.functionAddress(fn.name), fn.value);
  assert.equal(b.functionAddress(`${fn.name}+0x10`), fn.value + 0x10n);
  assert.equal(b.functionAddress(`${fn.name} + 16`), fn.value + 16n);
  assert.equal(b.functionAddress(`${fn.name}+0x${fn.size.toString(16)}`), `${fn.name}+0x${fn.size.toString(16)}: ${fn.name} is 0x${fn.size.toString(16)} bytes long`);
  assert.match(String(b.functionAddress('no_such_function+0x4')), /^no function no_such_function in /);
});
