/**
 * pt_regs as Linux's trap entry fills it, on each arch, for a kernel-mode
 * probe (kprobe) and a user-mode one (uprobe): the fields that come from the
 * CPU's mode and interrupt state, read by a C module's handler
 * (test/unit/g4-ptregs/ptregs_probe.c, user_mode() as Linux's asm/ptrace.h
 * defines it) and by a handler-language snippet (regs->FIELD).
 *
 * Linux's values: x86_64 kernel code runs with IF set, flags bit 1 always
 * set, cs = __KERNEL_CS 0x10, ss = __KERNEL_DS 0x18 (user: __USER_CS 0x33,
 * __USER_DS 0x2b, IF set); arm64 pstate M[3:0] = EL1h (0b0101) in the
 * kernel, EL0t (0) in user space; riscv status SPP set for a trap from the
 * kernel, SPIE the interrupted context's SIE (1: interrupts on), SIE clear,
 * UXL = 2: 0x200000120 as Linux's riscv oops prints it for kernel code; a
 * trap from user space has SPP clear and SPIE set.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { probesOf } from '../../emulator/probes/attach';
import { repoPath } from '../util/paths';
import { ARCHES, BIN, Prog } from '../uprobes/prog';

const KERNEL = (arch: string): string => repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);
const MOD = (arch: string): string => repoPath('test', 'unit', 'g4-ptregs', `ptregs_probe-${arch}.ko`);

/** the fields a snippet prints, per arch */
const FIELDS: Record<string, string> = {
  x86_64: 'regs->flags, regs->cs, regs->ss',
  aarch64: 'regs->pstate, 0, 0',
  riscv64: 'regs->status, 0, 0',
};

const IF = 0x200n;

/** what Linux's trap frame holds, checked field by field */
function checkKernel(arch: string, v: bigint[]): void {
  if (arch === 'x86_64') {
    assert.ok((v[0] & IF) !== 0n, `IF set: ${v[0].toString(16)}`);
    assert.ok((v[0] & 2n) !== 0n, 'bit 1 is always set');
    assert.deepEqual([v[1], v[2]], [0x10n, 0x18n], '__KERNEL_CS, __KERNEL_DS');
  } else if (arch === 'aarch64') {
    assert.equal(v[0] & 0xfn, 0x5n, 'EL1h');
  } else {
    assert.equal(v[0] & 0x122n, 0x120n, `SPP and SPIE set, SIE clear: ${v[0].toString(16)}`);
    assert.equal(v[0] >> 32n & 3n, 2n, 'UXL = 64-bit');
  }
}

function checkUser(arch: string, v: bigint[]): void {
  if (arch === 'x86_64') {
    assert.ok((v[0] & IF) !== 0n && (v[0] & 2n) !== 0n, `IF and bit 1 set: ${v[0].toString(16)}`);
    assert.deepEqual([v[1], v[2]], [0x33n, 0x2bn], '__USER_CS, __USER_DS');
  } else if (arch === 'aarch64') {
    assert.equal(v[0] & 0xfn, 0n, 'EL0t');
  } else {
    assert.equal(v[0] & 0x122n, 0x20n, `SPP clear, SPIE set, SIE clear: ${v[0].toString(16)}`);
  }
}

function runUntil(m: Machine, cond: () => boolean, what: string): void {
  for (let i = 0; i < 400 && !cond(); i++) {
    const r = m.runSlice(10_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.ok(cond(), `never happened: ${what}`);
}

const parse = (line: string): bigint[] => line.replace(/^R /, '').split(' ').map(h => BigInt(`0x${h}`));

for (const arch of ARCHES) {
  describe(`pt_regs as Linux fills it (${arch})`, () => {
    test('a kprobe handler snippet sees the kernel-mode trap frame (regs->FIELD)', () => {
      const m = new Machine(loadElf(KERNEL(arch)), { cpus: 1 });
      const log: string[] = [];
      m.onPrintk(r => log.push(r.text));
      const r = probesOf(m).addProbeFile(`kprobe do_fork { pre { printk("R %lx %lx %lx\\n", ${FIELDS[arch]}); } }`, 'ptregs.kprobe');
      assert.deepEqual(r.errors, []);
      runUntil(m, () => log.some(l => l.startsWith('R ')), 'a do_fork hit');
      checkKernel(arch, parse(log.find(l => l.startsWith('R '))!));
      if (arch === 'riscv64') assert.equal(parse(log.find(l => l.startsWith('R '))!)[0], 0x200000120n, 'Linux riscv kernel-mode status');
    });

    test('a C module\'s pre_handler sees the same frame and user_mode(regs) is false', () => {
      const m = new Machine(loadElf(KERNEL(arch)), { cpus: 1 });
      const log: string[] = [];
      m.onPrintk(r => log.push(r.text));
      m.modules.load(new Uint8Array(readFileSync(MOD(arch))), MOD(arch));
      runUntil(m, () => log.some(l => l.startsWith('ptregs:')), 'the C handler');
      const line = log.find(l => l.startsWith('ptregs:'))!;
      const mm = /^ptregs: user_mode=(\d) (\w+)=([0-9a-f]+)(?: cs=([0-9a-f]+) ss=([0-9a-f]+))?$/.exec(line);
      assert.ok(mm, line);
      assert.equal(mm[1], '0', 'user_mode(regs) of a kernel probe');
      checkKernel(arch, [BigInt(`0x${mm[3]}`), BigInt(`0x${mm[4] ?? '0'}`), BigInt(`0x${mm[5] ?? '0'}`)]);
    });

    test('a uprobe handler snippet sees the user-mode trap frame', () => {
      const root = mkdtempSync(join(tmpdir(), 'g4-ptregs-'));
      try {
        copyFileSync(BIN(arch, 'O2'), join(root, 'prog'));
        chmodSync(join(root, 'prog'), 0o755);
        const p = new Prog(arch, 'O2', { rootfs: root });
        const log: string[] = [];
        p.m.onPrintk(r => log.push(r.text));
        const r = probesOf(p.m).addProbeFile(`uprobe /prog:leaf { pre { printk("R %lx %lx %lx\\n", ${FIELDS[arch]}); } }`, 'u.kprobe');
        assert.deepEqual(r.errors, []);
        p.runGolden();
        const lines = log.filter(l => l.startsWith('R '));
        assert.ok(lines.length > 0, log.join('\n'));
        for (const l of lines) checkUser(arch, parse(l));
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  });
}
