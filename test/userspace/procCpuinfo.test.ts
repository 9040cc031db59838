/**
 * /proc/cpuinfo as Debian's busybox-static reads it (`cat /proc/cpuinfo`)
 * on each arch, in Linux 6.1's layout for that arch, with what the emulated
 * CPU says about itself:
 *
 *   x86_64   arch/x86/kernel/cpu/proc.c show_cpuinfo ("processor : 0",
 *            "vendor_id", "cpu family", "model", "model name", "stepping",
 *            the SMP core lines, fpu, "cpuid level", "flags", "bugs",
 *            "clflush size", "cache_alignment", "address sizes", "power
 *            management:", a blank line); vendor, family/model/stepping and
 *            the flags are decoded here from the CPU's own cpuid answers
 *            (leaves 0, 1, 7, 0x80000001) with Linux's flag names
 *            (arch/x86/include/asm/cpufeatures.h)
 *   aarch64  arch/arm64/kernel/cpuinfo.c c_show ("processor", "BogoMIPS",
 *            "Features", "CPU implementer", "CPU architecture: 8", "CPU
 *            variant", "CPU part", "CPU revision"); MIDR_EL1 read with mrs
 *   riscv64  arch/riscv/kernel/cpu.c c_show ("processor", "hart", "isa",
 *            "mmu", "mvendorid", "marchid", "mimpid"); Debian trixie's
 *            busybox is built for rv64gc: the CPU running it executes the
 *            F, D and C extensions the isa line names
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { debianBusybox } from './debian/busybox';
import { machine, getReg, setReg } from '../fixtures/x86/harness';
import { runWords, getX } from '../fixtures/a64/harness';
import { unfetched } from '../util/fetched';

const KERNEL = (arch: string): string => repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);

async function catCpuinfo(deb: string, arch: string): Promise<string | undefined> {
  const bb = debianBusybox(deb);
  if (!bb) return undefined;
  const root = mkdtempSync(join(tmpdir(), 'kprobe-cpuinfo-'));
  try {
    mkdirSync(join(root, 'bin'));
    copyFileSync(bb, join(root, 'bin', 'busybox'));
    const c = captureIo();
    const code = await runCli(['run', KERNEL(arch), '--rootfs', root, '--exec', '/bin/busybox cat /proc/cpuinfo'], c.io);
    assert.equal(code, 0, c.stderr() + c.stdout());
    const out = c.stdout();
    const from = out.indexOf('processor\t: 0\n');
    const to = out.indexOf('init: user space ended');
    assert.ok(from >= 0 && to > from, out);
    // the kernel's own lines (its workers, notes on system calls) may come between the program's
    return out.slice(from, to).split('\n').filter(l => !/^(kworker\/|kprobe-debug: |joined kworker\/)/.test(l)).join('\n');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** eax, ebx, ecx, edx of cpuid(leaf, 0) as the emulated x86_64 CPU answers */
function cpuid(leaf: number): Record<'eax' | 'ebx' | 'ecx' | 'edx', number> {
  const { cpu } = machine('0f a2 f4');
  setReg(cpu, 'rax', BigInt(leaf));
  setReg(cpu, 'rcx', 0n);
  cpu.run(5);
  const r = (n: string): number => Number(getReg(cpu, n) & 0xffffffffn);
  return { eax: r('rax'), ebx: r('rbx'), ecx: r('rcx'), edx: r('rdx') };
}

describe('/proc/cpuinfo in Linux\'s layout per arch (busybox-static cat; fetch: test/userspace/debian/fetch.sh)', () => {
  test('x86_64: show_cpuinfo\'s lines; vendor, family, model, stepping and flags are what the CPU\'s cpuid says', async t => {
    const text = await catCpuinfo('amd64', 'x86_64');
    if (text === undefined) { unfetched(t, 'busybox-static:amd64 could not be fetched (offline?)'); return; }
    const l0 = cpuid(0), l1 = cpuid(1), l7 = cpuid(7), e1 = cpuid(0x80000001);
    const vendor = [l0.ebx, l0.edx, l0.ecx].map(v => Buffer.from([v, v >> 8, v >> 16, v >>> 24].map(x => x & 0xff)).toString('latin1')).join('');
    const fam = (l1.eax >> 8) & 0xf, model = ((l1.eax >> 4) & 0xf) | (((l1.eax >> 16) & 0xf) << 4);
    // Linux's capability words in order: 0 = cpuid 1 edx, 1 = 0x80000001 edx, 4 = cpuid 1 ecx, 6 = 0x80000001 ecx, 9 = cpuid 7 ebx
    const names: [number, Record<number, string>][] = [
      [l1.edx, { 0: 'fpu', 1: 'vme', 2: 'de', 3: 'pse', 4: 'tsc', 5: 'msr', 6: 'pae', 7: 'mce', 8: 'cx8', 9: 'apic', 11: 'sep', 12: 'mtrr', 13: 'pge', 14: 'mca', 15: 'cmov', 16: 'pat', 17: 'pse36', 19: 'clflush', 23: 'mmx', 24: 'fxsr', 25: 'sse', 26: 'sse2', 28: 'ht' }],
      [e1.edx, { 11: 'syscall', 20: 'nx', 26: 'pdpe1gb', 27: 'rdtscp', 29: 'lm' }],
      [l1.ecx, { 0: 'pni', 1: 'pclmulqdq', 9: 'ssse3', 12: 'fma', 13: 'cx16', 19: 'sse4_1', 20: 'sse4_2', 22: 'movbe', 23: 'popcnt', 25: 'aes', 26: 'xsave', 28: 'avx', 30: 'rdrand' }],
      [e1.ecx, { 0: 'lahf_lm', 5: 'abm', 6: 'sse4a' }],
      [l7.ebx, { 0: 'fsgsbase', 3: 'bmi1', 5: 'avx2', 8: 'bmi2', 9: 'erms' }],
    ];
    const flags: string[] = [];
    for (const [reg, table] of names) {
      for (let bit = 0; bit < 32; bit++) {
        if (!((reg >>> bit) & 1)) continue;
        assert.ok(table[bit], `cpuid sets a bit this test does not name (${bit}): name it from cpufeatures.h`);
        flags.push(table[bit]);
      }
    }
    const block = (cpu: number): string => [
      `processor\t: ${cpu}`, `vendor_id\t: ${vendor}`, `cpu family\t: ${fam}`, `model\t\t: ${model}`, 'model name\t: unknown',
      `stepping\t: ${l1.eax & 0xf}`, 'physical id\t: 0', 'siblings\t: 2', `core id\t\t: ${cpu}`, 'cpu cores\t: 2',
      `apicid\t\t: ${cpu}`, `initial apicid\t: ${cpu}`, 'fpu\t\t: yes', 'fpu_exception\t: yes', `cpuid level\t: ${l0.eax}`, 'wp\t\t: yes',
      `flags\t\t: ${flags.join(' ')}`, 'bugs\t\t:', 'clflush size\t: 64', 'cache_alignment\t: 64',
      'address sizes\t: 36 bits physical, 48 bits virtual', 'power management:', '', ''].join('\n');
    assert.equal(text, block(0) + block(1));
    assert.equal(vendor, 'KprobeDbgX86');
  });

  test('aarch64: c_show\'s lines; implementer, variant, part, revision are MIDR_EL1\'s fields as mrs reads them', async t => {
    const text = await catCpuinfo('arm64', 'aarch64');
    if (text === undefined) { unfetched(t, 'busybox-static:arm64 could not be fetched (offline?)'); return; }
    const m = runWords([0xd5380000 /* mrs x0, midr_el1 */], {});
    const midr = Number(getX(m.cpu, 'x0'));
    const block = (cpu: number): string => [
      `processor\t: ${cpu}`, 'BogoMIPS\t: 2000.00', 'Features\t: fp asimd',
      `CPU implementer\t: 0x${(midr >>> 24).toString(16)}`, 'CPU architecture: 8', `CPU variant\t: 0x${((midr >> 20) & 0xf).toString(16)}`,
      `CPU part\t: 0x${((midr >> 4) & 0xfff).toString(16).padStart(3, '0')}`, `CPU revision\t: ${midr & 0xf}`, '', ''].join('\n');
    assert.equal(text, block(0) + block(1));
    // Arm's implementer code, a Cortex-A57 part number
    assert.match(text, /^CPU implementer\t: 0x41$/m);
  });

  test('riscv64: c_show\'s lines (processor, hart, isa rv64imafdc, mmu sv39, machine ids)', async t => {
    const text = await catCpuinfo('riscv64', 'riscv64');
    if (text === undefined) { unfetched(t, 'busybox-static:riscv64 could not be fetched (offline?)'); return; }
    const block = (cpu: number): string => [
      `processor\t: ${cpu}`, `hart\t\t: ${cpu}`, 'isa\t\t: rv64imafdc', 'mmu\t\t: sv39',
      'mvendorid\t: 0x0', 'marchid\t\t: 0x0', 'mimpid\t\t: 0x0', '', ''].join('\n');
    assert.equal(text, block(0) + block(1));
  });
});
