/**
 * Linux's pt_regs accessors (<asm/ptrace.h> of the module headers, as
 * arch/{x86,arm64,riscv}/include/asm/ptrace.h define them in 6.1) read in
 * a C module's kprobe handler on the sample kernel's do_fork, on each
 * arch (test/modules/g4b-ptregs/g4b_ptregs.c, built at test time):
 * user_mode() is false for a kernel probe (x86 cs CPL 0, arm64 pstate EL1h,
 * riscv status SPP set), instruction_pointer() and kernel_stack_pointer()
 * equal regs_get_register() at the fields' offsets, a byte offset past
 * MAX_REG_OFFSET reads 0, regs_get_kernel_argument() gives do_fork's
 * arguments from the calling convention's registers,
 * regs_get_kernel_stack_nth(0) on x86 is the return address into the
 * caller (worker_fn), and a word THREAD_SIZE above sp is off the stack (0).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';
import { KBUILD_ARCHES, builtModule, kbuild, unavailable } from './kbuild';

const KERNEL = (arch: string): string => repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);
const NAME = 'g4b_ptregs';

/** examples/kernel/kernel.h: SIGCHLD | CLONE_VM | CLONE_FS | CLONE_FILES, and worker_fn's first do_fork call */
const FIRST_CALL_ARGS = [17n | 0x100n | 0x200n | 0x400n, 0x7ff0000n, 0n, 0x2000n];

function fields(log: readonly string[], prefix: string): Map<string, string> {
  const l = log.find(x => x.startsWith(`${NAME}: ${prefix}`));
  assert.ok(l, `no "${prefix}" line:\n${log.join('\n')}`);
  return new Map(l.slice(NAME.length + 2).split(' ').map(kv => kv.split('=') as [string, string]));
}
const big = (h: string | undefined): bigint => { assert.ok(h !== undefined); return BigInt(`0x${h}`); };

for (const arch of KBUILD_ARCHES) describe(`Linux's pt_regs accessors in a module's kprobe handler (${arch})`, () => {
  test('user_mode, instruction_pointer, kernel_stack_pointer, regs_get_register, regs_get_kernel_argument, regs_get_kernel_stack_nth', t => {
    const b = kbuild(repoPath('test', 'modules', 'g4b-ptregs'), arch);
    if ('missing' in b) { unavailable(t, b.missing); return; }
    const image = loadElf(KERNEL(arch));
    const m = new Machine(image, { cpus: 1 });
    const log: string[] = [];
    m.onPrintk(r => log.push(r.text));
    m.modules.load(new Uint8Array(readFileSync(builtModule(b.out, NAME))), `${NAME}.ko`);
    for (let i = 0; i < 400 && !log.some(l => l.startsWith(`${NAME}: stack0=`)); i++) {
      const r = m.runSlice(10_000);
      if (r.kind === 'exited' || r.kind === 'limit') break;
    }
    const regs = fields(log, 'user_mode=');
    const doFork = image.symbols.lookup('do_fork')?.value;
    assert.ok(doFork !== undefined);
    assert.equal(regs.get('user_mode'), '0', 'a kernel-mode probe');
    // x86: the ip after the int3; arm64 / riscv64: the probed instruction's own address
    assert.equal(big(regs.get('ip')), arch === 'x86_64' ? doFork + 1n : doFork);
    assert.equal(regs.get('ip_by_offset'), regs.get('ip'));
    assert.equal(regs.get('sp_by_offset'), regs.get('sp'));
    assert.equal(regs.get('past_max'), '0');
    assert.deepEqual(fields(log, 'args=').get('args')?.split(',').map(h => big(h)), FIRST_CALL_ARGS);
    const st = fields(log, 'stack0=');
    assert.deepEqual([st.get('within'), st.get('beyond'), st.get('beyond_nth')], ['1', '0', '0']);
    if (arch === 'x86_64') assert.equal(image.symbols.resolve(big(st.get('stack0')))?.sym.name, 'worker_fn', 'the return address do_fork was called with');
  });
});
