/**
 * The vmlinux seen at a KASLR-moved kernel's addresses
 * (emulator/debug/linuxSlide.ts) without booting: over Debian's -dbg
 * vmlinux, the moved view answers at `link + slide` what the vmlinux
 * answers at `link` (symbols, lines, the DWARF's function ranges, location
 * lists looked up by pc, a global's DW_OP_addr), leaves the per-CPU
 * offsets alone, and names nothing at the link addresses the running
 * kernel no longer has. relocateExpr over hand-made expressions. And the
 * machine's determinism: the same kernel, initrd, command line and
 * settings give the same slide (two boots up to the IDT load); breakpoints
 * set before the slide is known are moved by it, and one in code that runs
 * before is named in the session's notice.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { loadElf } from '../../emulator/elf';
import { slidVmlinux } from '../../emulator/debug/linuxSlide';
import { relocateExpr } from '../../emulator/elf/dwarf/relocate';
import { frameVariables, globalVariable } from '../../emulator/debug/variables';
import { inlineFrames } from '../../emulator/elf/dwarf/scopes';
import { LinuxTarget } from '../../emulator/debug/linuxTarget';
import { linuxLaunchOptions } from '../../emulator/debug/linuxLaunch';
import { debianKernel, busyboxInitramfs } from '../system/linuxFiles';
import { unfetched } from '../util/fetched';
import { VMLINUX } from './linuxGuest';

const SLIDE = 0x2a00000n;

test('relocateExpr moves DW_OP_addr operands and keeps every other byte', () => {
  const reloc = { toRuntime: (a: bigint) => (a >= 0x1000n ? a + 0x100n : a), toLink: (a: bigint) => a };
  // DW_OP_addr 0x1234; DW_OP_plus_uconst 8; DW_OP_breg7 -8; DW_OP_addr 0x10 (outside the moved range)
  const e = Uint8Array.from([0x03, 0x34, 0x12, 0, 0, 0, 0, 0, 0, 0x23, 8, 0x77, 0x78, 0x03, 0x10, 0, 0, 0, 0, 0, 0, 0]);
  const r = relocateExpr(e, reloc, 8, 4, true);
  assert.deepEqual([...r], [0x03, 0x34, 0x13, 0, 0, 0, 0, 0, 0, 0x23, 8, 0x77, 0x78, 0x03, 0x10, 0, 0, 0, 0, 0, 0, 0]);
  assert.deepEqual([...e].slice(0, 3), [0x03, 0x34, 0x12], 'the DWARF bytes themselves are not written');
  const noAddr = Uint8Array.from([0x91, 0x70]);
  assert.equal(relocateExpr(noAddr, reloc, 8, 4, true), noAddr, 'nothing to move: the same bytes');
  const unknown = Uint8Array.from([0xff, 0x03, 0x34, 0x12, 0, 0, 0, 0, 0, 0]);
  assert.equal(relocateExpr(unknown, reloc, 8, 4, true), unknown, 'an opcode the walk does not know: left alone');
});

test('Debian\'s vmlinux seen moved by a slide: symbols, lines, DWARF ranges, locations and globals at link + slide', (t) => {
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const vm = loadElf(VMLINUX);
  const v = slidVmlinux(vm, SLIDE);
  assert.equal(slidVmlinux(vm, SLIDE), v, 'one view per slide');
  assert.equal(slidVmlinux(vm, 0n), vm);
  const open = vm.symbols.lookup('do_sys_openat2')!;
  assert.equal(v.symbols.lookup('do_sys_openat2')!.value, open.value + SLIDE);
  assert.equal(v.symbols.format(open.value + SLIDE + 4n), vm.symbols.format(open.value + 4n));
  assert.equal(v.symbols.resolve(open.value), undefined, 'the link address is no code of the moved kernel');
  assert.equal(v.symbols.lookup('current_task')!.value, vm.symbols.lookup('current_task')!.value, 'a per-CPU offset is not moved');
  assert.equal(v.section('.orc_unwind_ip')!.addr, vm.section('.orc_unwind_ip')!.addr + SLIDE);
  assert.deepEqual(v.lines!.lineForAddress(open.value + SLIDE), vm.lines!.lineForAddress(open.value));
  const line = vm.lines!.lineForAddress(open.value)!;
  assert.deepEqual(v.lines!.addressesForLine(line.file, line.line), vm.lines!.addressesForLine(line.file, line.line).map(a => a + SLIDE));

  // inlined calls at a pc inside __x64_sys_openat (do_sys_open ... inlined there), by the DWARF's ranges
  const x64 = vm.symbols.lookup('__x64_sys_openat')!;
  for (let off = 0n; off < x64.size; off++) {
    const link = inlineFrames(vm, x64.value + off);
    assert.deepEqual(inlineFrames(v, x64.value + off + SLIDE).map(f => [f.function, f.inlined, f.call?.line]), link.map(f => [f.function, f.inlined, f.call?.line]), `at +0x${off.toString(16)}`);
  }
  // do_sys_openat2's parameters at its entry: location lists looked up by the moved pc
  const regs = new Map<number, bigint>([[5, 0xffffff9cn], [4, 0xffff888000001000n], [1, 0xffffc90000001f00n], [7, 0xffffc90000001e00n], [16, open.value]]);
  const read = (): undefined => undefined;
  const atLink = frameVariables(vm, { pc: open.value, level: 0, regs }, read);
  const atRun = frameVariables(v, { pc: open.value + SLIDE, level: 0, regs: new Map([...regs, [16, open.value + SLIDE]]) }, read);
  assert.ok(atLink.ok && atRun.ok);
  if (atLink.ok && atRun.ok) {
    assert.deepEqual(atRun.params.map(p => [p.name, p.value]), atLink.params.map(p => [p.name, p.value]));
    assert.equal(atRun.params.find(p => p.name === 'dfd')?.value, '-100');
  }
  // a global's DW_OP_addr: read where the moved kernel has it
  const jiffies = vm.symbols.lookup('jiffies_64')!.value;
  const asked: bigint[] = [];
  const mem = (a: bigint, n: number): Uint8Array => { asked.push(a); const b = new Uint8Array(n); b[0] = 42; return b; };
  const g = globalVariable(v, 'jiffies_64', mem);
  assert.equal(g?.value, '42');
  assert.deepEqual(asked, [jiffies + SLIDE]);
});

test('the slide is deterministic (the same kernel, initrd, command line and settings give the same slide); breakpoints set before it are moved, those in code run before it named once', (t) => {
  const kernel = debianKernel(t), initrd = busyboxInitramfs(t);
  if (!kernel || !initrd) return;
  if (!existsSync(VMLINUX)) return unfetched(t, 'no test/linux/dbg/cache/vmlinux (test/linux/dbg/fetch-vmlinux-dbg.sh)');
  const vm = loadElf(VMLINUX);
  const boot = (): { target: LinuxTarget } => {
    const { settings, machine } = linuxLaunchOptions({ kernel: kernel.path, initrd: initrd.path, vmlinux: VMLINUX, append: 'console=ttyS0 panic=-1 acpi=off', cpus: 1, memory: 256 });
    return { target: new LinuxTarget(settings, machine) };
  };
  const a = boot();
  const early = a.target.setBreakpoints('function', 'function', [
    { addresses: [vm.symbols.lookup('x86_64_start_kernel')!.value], label: 'x86_64_start_kernel' },
    { addresses: [vm.symbols.lookup('kernel_init')!.value], label: 'kernel_init' },
  ]);
  const runToSlide = (x: { target: LinuxTarget }): bigint | undefined => {
    x.target.run.run(200_000_000, () => (x.target.kaslrSlide() !== undefined ? { kind: 'done', detail: 'the slide is known' } : null));
    return x.target.kaslrSlide();
  };
  const slide = runToSlide(a);
  assert.ok(slide !== undefined && slide !== 0n, `a slide: ${slide}`);
  assert.equal(a.target.vmlinux!.symbols.lookup('kernel_init')!.value, vm.symbols.lookup('kernel_init')!.value + slide, 'the target sees the vmlinux moved');
  const [bx, bk] = early.map(b => { assert.ok(typeof b !== 'string', String(b)); return b; });
  assert.deepEqual(bk.addresses, [vm.symbols.lookup('kernel_init')!.value + slide], 'a breakpoint set before the slide is moved by it');
  assert.deepEqual(bx.addresses, [vm.symbols.lookup('x86_64_start_kernel')!.value + slide]);
  const msg = a.target.kaslrMessage();
  assert.match(msg, new RegExp(`relocated by KASLR, 0x${slide.toString(16)} above`));
  assert.match(msg, /may have been passed: x86_64_start_kernel\n$/, 'the breakpoint in code that runs before the slide is known is named; kernel_init is not');
  assert.equal(runToSlide(boot()), slide, 'a second boot: the same slide');
});
