/**
 * The full-system PC booting Debian's 6.1 kernel (test/linux/fetch-kernel.sh,
 * make-initramfs.sh) to the busybox prompt, `console=ttyS0 nokaslr panic=-1
 * acpi=off` on one CPU and (not with --quick) with ACPI on two CPUs, with
 * the block translator on and off: virtual instructions, host seconds (wall
 * and this process's CPU: the machine may be shared), M instructions/s
 * (paging on), the virtual seconds, each milestone's instruction count and
 * the share of instructions that ran translated; beside it
 * qemu-system-x86_64 -accel tcg booting the same kernel, initrd and command
 * line to the same prompt (wall seconds until "/ # " appears on its serial
 * console), when installed. The two modes must reach the prompt at the same
 * instruction count (determinism). Then a load/store hot loop whose every
 * access goes through the guest's 4-level page tables (a system-mode CPU)
 * beside the same code on the emulated-kernel machine's CPU (flat memory),
 * both translated and both interpreted. Skipped (with the way to get them)
 * when the kernel or initrd is missing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { bootSession, MILESTONES, PROMPT } from '../../emulator/system/pcBoot';
import { allTranslators, translatorFor, type FrontEnd, type TranslateMode } from '../../emulator/jit';
import { x86FrontEnd } from '../../emulator/arch/x86_64/jit';
import type { X86Cpu } from '../../emulator/arch/x86_64/cpu';
import { runSystemCpu } from '../../emulator/arch/x86_64/sysmode/systemCpu';
import { machine, DATA } from '../../test/fixtures/x86/harness';
import { SysMachine, KCODE, KDATA, RBX, RDX } from '../../test/system/cpu/harness';
import { repoRoot } from './lib/root';

const CMDLINE = 'console=ttyS0 nokaslr panic=-1 acpi=off';
const MEMORY_MIB = 256;
const root = repoRoot('linux');
const kernelPath = join(root, 'test', 'linux', 'cache', 'vmlinuz');
const initrdPath = join(root, 'test', 'linux', 'cache', 'initramfs.cpio.gz');

const quick = process.argv.includes('--quick');

interface Config { readonly name: string; readonly cmdline: string; readonly cpus: number; readonly memoryMiB: number; readonly acpi: boolean }
const CONFIGS: readonly Config[] = [
  { name: 'acpi=off, 1 CPU', cmdline: CMDLINE, cpus: 1, memoryMiB: MEMORY_MIB, acpi: false },
  { name: 'ACPI, 2 CPUs', cmdline: 'console=ttyS0 nokaslr panic=-1', cpus: 2, memoryMiB: 512, acpi: true },
];

function qemuToPrompt(c: Config): Promise<number | string> {
  return new Promise(resolve => {
    const t0 = performance.now();
    const q = spawn('qemu-system-x86_64', ['-accel', 'tcg', '-M', c.acpi ? 'pc,hpet=off' : 'pc', '-m', String(c.memoryMiB), '-smp', String(c.cpus), '-nodefaults', '-display', 'none',
      '-serial', 'stdio', '-no-reboot', '-kernel', kernelPath, '-initrd', initrdPath, '-append', c.cmdline], { stdio: ['pipe', 'pipe', 'ignore'] });
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

interface Booted { instructions: number; wall: number; cpu: number; translated: number; line: string }

function bootTo(c: Config, mode: TranslateMode, kernel: Uint8Array, initrd: Uint8Array): Booted {
  const stats = (): number => allTranslators().get(`x86_64:${mode}`)?.stats.translatedInsns ?? 0;
  const tr0 = stats();
  const u0 = process.cpuUsage();
  const t0 = performance.now();
  const r = bootSession({
    kernel: { name: kernelPath, data: kernel }, initrd: { name: initrdPath, data: initrd },
    cmdline: c.cmdline, cpus: c.cpus, memoryMiB: c.memoryMiB, acpi: c.acpi, maxInstructions: 8_000_000_000, stopAtPrompt: true, translate: mode,
  });
  const wall = (performance.now() - t0) / 1000;
  const u = process.cpuUsage(u0), cpu = (u.user + u.system) / 1e6;
  const translated = stats() - tr0;
  const reached = r.stop.kind === 'done' ? 'the shell prompt' : `stopped (${r.stop.kind}: ${r.stop.detail})`;
  let line = `  translator ${mode.padEnd(3)}: ${reached}: ${r.instructions} instructions in ${wall.toFixed(1)} s host (${cpu.toFixed(1)} s CPU) = ${(r.instructions / 1e6 / wall).toFixed(2)} M instr/s `
    + `(${(r.instructions / 1e6 / cpu).toFixed(2)} per CPU second), ${(Number(r.virtualNs) / 1e9).toFixed(3)} s virtual, ${(100 * translated / r.instructions).toFixed(0)} % translated`;
  for (const m of MILESTONES) {
    const at = r.milestones.get(m);
    line += `\n    ${JSON.stringify(m).padEnd(32)} ${at === undefined ? '-' : `${(at / 1e6).toFixed(0)} M instructions`}`;
  }
  return { instructions: r.instructions, wall, cpu, translated, line };
}

// the hot loop: inc rax; mov [rbx], rax; mov rcx, [rbx]; dec rdx; jnz loop; hlt
const LOOP = '48 ff c0 48 89 03 48 8b 0b 48 ff ca 75 f2 f4';

/** M instructions/s of the loop on the emulated-kernel machine's CPU (flat memory) */
function flatLoop(n: number, translate: boolean): number {
  const { cpu } = machine(LOOP);
  cpu.jit = translate ? translatorFor('x86_64', x86FrontEnd as unknown as FrontEnd<unknown, never>, 'on') as unknown as X86Cpu['jit'] : null;
  cpu.lo[3] = DATA; cpu.lo[2] = n;
  const t0 = performance.now();
  let done = 0;
  while (done < 5 * n) { const r = cpu.run(1_000_000); done += r.executed; if (r.trap) break; }
  return done / ((performance.now() - t0) * 1e3);
}
/** ... and on a system-mode CPU, every access through the 4-level page walk (its TLB; translated: the translator's TLB filled by the walk) */
function pagedLoop(n: number, translate: boolean): number {
  const m = new SysMachine(translate ? 'on' : 'off');
  m.code(KCODE, LOOP);
  m.setReg(RBX, BigInt(KDATA)); m.setReg(RDX, BigInt(n));
  const t0 = performance.now();
  let done = 0;
  while (done < 5 * n) { const r = runSystemCpu(m.cpu, 20_000); done += r.executed; if (r.halted || r.event) break; }
  return done / ((performance.now() - t0) * 1e3);
}

async function main(): Promise<void> {
  const n = quick ? 1_000_000 : 4_000_000;
  const best = (f: () => number): number => Math.max(f(), f(), f());
  const ft = best(() => flatLoop(n, true)), pt = best(() => pagedLoop(n, true));
  const fi = best(() => flatLoop(n / 4, false)), pi = best(() => pagedLoop(n / 4, false));
  console.log(`hot loop (${5 * n} instructions, load/store): paged (system-mode CPU, 4-level page tables) ${pt.toFixed(0)} M instr/s translated, ${pi.toFixed(1)} interpreted; `
    + `emulated-kernel machine's CPU (flat) ${ft.toFixed(0)} translated, ${fi.toFixed(1)} interpreted; paged / flat translated = ${(pt / ft).toFixed(2)} (goal >= 0.5)`);
  if (!existsSync(kernelPath) || !existsSync(initrdPath)) {
    console.log('linux: skipped: no test/linux/cache/vmlinuz or initramfs.cpio.gz (bash test/linux/fetch-kernel.sh && bash test/linux/make-initramfs.sh)');
    return;
  }
  const kernel = new Uint8Array(readFileSync(kernelPath)), initrd = new Uint8Array(readFileSync(initrdPath));
  console.log(`kernel: ${kernelPath}`);
  for (const c of quick ? CONFIGS.slice(0, 1) : CONFIGS) {
    console.log(`${c.cmdline} (${c.name}, ${c.memoryMiB} MiB)`);
    const on = bootTo(c, 'on', kernel, initrd);
    console.log(on.line);
    const off = bootTo(c, 'off', kernel, initrd);
    console.log(off.line);
    console.log(`  determinism: ${on.instructions === off.instructions ? 'the same' : 'DIFFERENT'} instruction count at the prompt with the translator on and off`);
    const q = await qemuToPrompt(c);
    if (typeof q === 'number') {
      console.log(`  qemu-system-x86_64 -accel tcg: the shell prompt in ${q.toFixed(1)} s wall; emulator / qemu = ${(on.wall / q).toFixed(1)}x translated `
        + `(${(on.cpu / q).toFixed(1)}x by CPU seconds), ${(off.wall / q).toFixed(1)}x interpreted (${(off.cpu / q).toFixed(1)}x by CPU seconds); goal <= 5x`);
    } else console.log(`  qemu-system-x86_64 -accel tcg: ${q}`);
  }
}

void main();
