/**
 * User-space speed (compiled programs and busybox, not only the sample
 * kernel): emulated instructions per second on a floating-point-and-string
 * program at default compiler flags (test/userspace/bin/fpstr-*: SSE2 /
 * FP+AdvSIMD, vectorised loops, repeated 300 times), on Debian's
 * busybox-static doing floating-point work (awk), string work (md5sum and
 * sort of a 256 KiB file) and shell work (a loop forking pipelines), per
 * architecture, next to the integer loopbench of the CPU section; with
 * qemu-user's wall time on the same ELF when it is installed. busybox rows
 * need test/userspace/debian/fetch.sh.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import { Row, fmt } from './lib/table';
import { repoRoot } from './lib/root';

const root = repoRoot('userspace');
const quick = process.argv.includes('--quick');


function qemuTime(qemu: string, args: string[], cwd: string): number | undefined {
  if (spawnSync(qemu, ['--version'], { stdio: 'ignore' }).status !== 0) return undefined;
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t0 = performance.now();
    const r = spawnSync(qemu, args, { cwd, stdio: ['ignore', 'ignore', 'ignore'], env: { PATH: '/bin', LC_ALL: 'C' } });
    if (r.error) return undefined;
    best = Math.min(best, (performance.now() - t0) / 1000);
  }
  return best;
}

function run(name: string, elf: string, argv: string[], qemu: string, rootfs?: string): Row {
  const m = Machine.forUserProgram(loadElf(elf), argv, { stdout: () => undefined, stderr: () => undefined },
    { rootfs, cwd: rootfs ? '/' : undefined, env: ['PATH=/bin', 'LC_ALL=C'], execPath: elf, cpus: 1 });
  const t0 = performance.now();
  const exit = m.run();
  const seconds = (performance.now() - t0) / 1000;
  return { name, instructions: m.totalInstructions, seconds, qemu: qemuTime(qemu, [elf, ...argv.slice(1)], rootfs ?? root), ok: `exit ${exit.code}` };
}


const scratch = mkdtempSync(join(tmpdir(), 'kprobe-bench-'));
try {
  // a 256 KiB text file for the string workloads
  const words = ['pear', 'apple', 'banana', 'cherry', 'kiwi', 'plum', 'fig', 'lime'];
  let text = '';
  for (let k = 0; text.length < 256 * 1024; k++) text += `${words[(k * 7) % 8]} ${(k * 2654435761) % 1000003} ${words[k % 8]}\n`;
  writeFileSync(join(scratch, 'data.txt'), text);
  for (const { arch, deb, qemu } of [
    { arch: 'x86_64', deb: 'amd64', qemu: 'qemu-x86_64' },
    { arch: 'aarch64', deb: 'arm64', qemu: 'qemu-aarch64' },
  ]) {
    const rows: Row[] = [];
    const fp = join(root, 'test', 'userspace', 'bin', `fpstr-${arch}-gcc-O2.elf`);
    rows.push(run('fpstr x300 (FP + string loops, vectorised)', fp, [fp, quick ? '30' : '300'], qemu));
    const loop = join(root, 'test', 'conformance', 'bin', ...(arch === 'x86_64' ? [] : [arch]), 'loopbench-clang-O2.elf');
    if (!quick && existsSync(loop)) rows.push(run('loopbench (integer)', loop, [loop], qemu));
    const bb = join(root, 'test', 'userspace', 'debian', 'cache', deb, 'bin', 'busybox');
    if (existsSync(bb)) {
      rows.push(run('busybox awk (floating point)', bb, ['busybox', 'awk', 'BEGIN { s = 0; for (i = 1; i < 20000; i++) s += 1 / (i * i); printf "%.12f\\n", s }'], qemu, scratch));
      rows.push(run('busybox md5sum 256 KiB (string)', bb, ['busybox', 'md5sum', 'data.txt'], qemu, scratch));
      rows.push(run('busybox sort 256 KiB (string)', bb, ['busybox', 'sort', 'data.txt'], qemu, scratch));
      if (!quick) rows.push(run('busybox sh: 100 pipelines (fork, exec, pipes)', bb, ['busybox', 'sh', '-c', 'i=0; while [ $i -lt 100 ]; do echo $i | tr 0-9 a-j > /dev/null; i=$((i+1)); done'], qemu, scratch));
    } else {
      console.log(`(busybox rows skipped: run test/userspace/debian/fetch.sh for ${deb})`);
    }
    console.log(`\n${arch}\n${fmt(rows, 'workload')}`);
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
