/**
 * Registration cost: kprobes on every instruction start of the sample
 * kernel's functions (up to N = 100, 1000, all), registered one by one
 * through register_kprobe, then unregistered in one batch. Prints ms in
 * all and per probe (the optimizer re-evaluates only the regions a probe can
 * affect, so the per-probe cost stays flat as N grows).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import type { Kprobe } from '../../emulator/kprobes';

function repoRoot(): string {
  let d = resolve(__dirname);
  while (!existsSync(join(d, 'examples', 'kernel', 'build'))) {
    const up = dirname(d);
    if (up === d) throw new Error('bench/registration: cannot find the repository');
    d = up;
  }
  return d;
}

const image = loadElf(join(repoRoot(), 'examples/kernel/build/kernel-x86_64.elf'));

function starts(m: Machine): bigint[] {
  const out: bigint[] = [];
  for (const s of [...image.symbols.functions()].filter(f => f.size > 0n).sort((a, b) => (a.value < b.value ? -1 : 1))) {
    for (let p = s.value; p < s.value + s.size;) {
      const d = m.arch.decode(m.kernel.mem, p);
      if (!d) break;
      out.push(p);
      p += BigInt(d.length);
    }
  }
  return out;
}

console.log('registration: register_kprobe on instruction starts of the sample kernel (x86_64), then one unregister_kprobes');
console.log('       N   register ms   ms/probe   unregister ms');
for (const n of [100, 1000, Infinity]) {
  const m = new Machine(image, { cpus: 1 });
  const addrs = starts(m).slice(0, n === Infinity ? undefined : n);
  const kps: Kprobe[] = addrs.map(addr => ({ addr, pre_handler: () => 0 }));
  const t0 = performance.now();
  for (const kp of kps) m.kprobes.registerKprobe(kp);
  const t1 = performance.now();
  m.kprobes.unregisterKprobes(kps);
  const t2 = performance.now();
  console.log(`${String(addrs.length).padStart(8)}  ${(t1 - t0).toFixed(0).padStart(12)}  ${((t1 - t0) / addrs.length).toFixed(3).padStart(9)}  ${(t2 - t1).toFixed(0).padStart(14)}`);
}
