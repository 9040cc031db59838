/**
 * The full-system PC booting Debian's 6.1 kernel (test/linux/fetch-kernel.sh,
 * make-initramfs.sh) with `console=ttyS0 nokaslr panic=-1 acpi=off` on one
 * CPU to the busybox prompt: virtual instructions, host seconds, M
 * instructions/s (paging on, interpreted), the virtual seconds, and each
 * milestone's instruction count; beside it qemu-system-x86_64 -accel tcg
 * booting the same kernel, initrd and command line to the same prompt
 * (wall seconds until "/ # " appears on its serial console), when installed.
 * Skipped (with the way to get them) when the kernel or initrd is missing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { bootSession, MILESTONES, PROMPT } from '../../emulator/system/pcBoot';
import { repoRoot } from './lib/root';

const CMDLINE = 'console=ttyS0 nokaslr panic=-1 acpi=off';
const MEMORY_MIB = 256;
const root = repoRoot('linux');
const kernelPath = join(root, 'test', 'linux', 'cache', 'vmlinuz');
const initrdPath = join(root, 'test', 'linux', 'cache', 'initramfs.cpio.gz');

function qemuToPrompt(): Promise<number | string> {
  return new Promise(resolve => {
    const t0 = performance.now();
    const q = spawn('qemu-system-x86_64', ['-accel', 'tcg', '-M', 'pc', '-m', String(MEMORY_MIB), '-smp', '1', '-nodefaults', '-display', 'none',
      '-serial', 'stdio', '-no-reboot', '-kernel', kernelPath, '-initrd', initrdPath, '-append', CMDLINE], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    const timer = setTimeout(() => { q.kill(); resolve('no prompt in 300 s'); }, 300_000);
    q.on('error', e => { clearTimeout(timer); resolve(`not run: ${e.message}`); });
    q.stdout.on('data', (d: Buffer) => {
      out += d.toString('latin1');
      if (out.includes(PROMPT)) { const s = (performance.now() - t0) / 1000; clearTimeout(timer); q.kill(); resolve(s); }
    });
    q.on('exit', () => { clearTimeout(timer); resolve('qemu exited before the prompt'); });
  });
}

async function main(): Promise<void> {
  if (!existsSync(kernelPath) || !existsSync(initrdPath)) {
    console.log('linux: skipped: no test/linux/cache/vmlinuz or initramfs.cpio.gz (bash test/linux/fetch-kernel.sh && bash test/linux/make-initramfs.sh)');
    return;
  }
  const t0 = performance.now();
  const r = bootSession({
    kernel: { name: kernelPath, data: new Uint8Array(readFileSync(kernelPath)) },
    initrd: { name: initrdPath, data: new Uint8Array(readFileSync(initrdPath)) },
    cmdline: CMDLINE, cpus: 1, memoryMiB: MEMORY_MIB, acpi: false, maxInstructions: 8_000_000_000, stopAtPrompt: true,
  });
  const secs = (performance.now() - t0) / 1000;
  const reached = r.stop.kind === 'done' ? 'the shell prompt' : `stopped (${r.stop.kind}: ${r.stop.detail})`;
  console.log(`kernel: ${kernelPath}\ncmdline: ${CMDLINE} (1 CPU, ${MEMORY_MIB} MiB)`);
  console.log(`emulator: ${reached}: ${r.instructions} instructions in ${secs.toFixed(1)} s host = ${(r.instructions / 1e6 / secs).toFixed(2)} M instr/s (paging on), ${(Number(r.virtualNs) / 1e9).toFixed(3)} s virtual`);
  for (const m of MILESTONES) {
    const at = r.milestones.get(m);
    console.log(`  ${JSON.stringify(m).padEnd(32)} ${at === undefined ? '-' : `${(at / 1e6).toFixed(0)} M instructions`}`);
  }
  const q = await qemuToPrompt();
  if (typeof q === 'number') console.log(`qemu-system-x86_64 -accel tcg: the shell prompt in ${q.toFixed(1)} s wall; emulator / qemu = ${(secs / q).toFixed(1)}x`);
  else console.log(`qemu-system-x86_64 -accel tcg: ${q}`);
}

void main();
