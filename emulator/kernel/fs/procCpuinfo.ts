/**
 * /proc/cpuinfo, one block per CPU in the layout Linux 6.1 prints for the
 * arch, with what the emulated CPU reports about itself:
 *
 *   x86_64   arch/x86/kernel/cpu/proc.c show_cpuinfo: vendor_id, family,
 *            model, stepping from cpuid leaves 0 and 1, flags in Linux's
 *            capability-word order (x86_cap_flags names) for the bits the
 *            CPU's cpuid sets (arch/x86_64/exec/system.ts); no brand string
 *            leaf (max extended leaf 0x80000001): "model name : unknown" and
 *            the address sizes Linux assumes without leaf 0x80000008
 *   aarch64  arch/arm64/kernel/cpuinfo.c c_show: BogoMIPS from the timer
 *            frequency (CNTFRQ_EL0 1 GHz: loops_per_jiffy = 1e9 / HZ),
 *            Features from the hwcaps given to user processes (AT_HWCAP),
 *            then MIDR_EL1's fields (arch/aarch64/exec/system.ts)
 *   riscv64  arch/riscv/kernel/cpu.c c_show: processor, hart, isa (the
 *            base and single-letter extensions the CPU executes: I M A F D
 *            C; 6.1 names no Zicsr / Zifencei), mmu, and the machine-mode
 *            ids mvendorid / marchid / mimpid, 0 (not implemented)
 *
 * The CPU models' numbers are restated here (test/userspace/procCpuinfo
 * checks them against the CPUs themselves).
 */
import type { Kernel } from '../kernel';

/** cpuid as the x86_64 model answers it */
export const X86_CPUID = {
  vendor: 'KprobeDbgX86',
  maxLeaf: 7,
  leaf1Eax: 0x000306a9,
  /** (cpuid function, register, bit) -> Linux's flag name, in Linux's capability-word order */
  flags: [
    ['fpu', 1, 'edx', 0], ['tsc', 1, 'edx', 4], ['cx8', 1, 'edx', 8], ['cmov', 1, 'edx', 15], ['fxsr', 1, 'edx', 24],
    ['sse', 1, 'edx', 25], ['sse2', 1, 'edx', 26],
    ['syscall', 0x80000001, 'edx', 11], ['lm', 0x80000001, 'edx', 29],
    ['cx16', 1, 'ecx', 13], ['popcnt', 1, 'ecx', 23],
    ['abm', 0x80000001, 'ecx', 5],
    ['bmi1', 7, 'ebx', 3],
  ] as const,
};

/** MIDR_EL1 and the timer frequency of the aarch64 model */
export const A64_ID = { midr: 0x410fd070, cntfrq: 1_000_000_000 };
/** arm64's hwcap_str, the first of them, by AT_HWCAP bit */
const A64_HWCAP_STR = ['fp', 'asimd', 'evtstrm', 'aes', 'pmull', 'sha1', 'sha2', 'crc32', 'atomics', 'fphp', 'asimdhp', 'cpuid'];

/** the riscv64 model's ISA string as Linux prints it (single letters in canonical order, then Z extensions) */
export const RV_ISA = 'rv64imafdc';

/** Linux's HZ: the emulated kernel ticks at 1000 */
const HZ = 1000;

function x86Block(cpu: number, nr: number): string {
  const a = X86_CPUID.leaf1Eax;
  const stepping = a & 0xf, baseModel = (a >> 4) & 0xf, baseFamily = (a >> 8) & 0xf;
  const family = baseFamily === 0xf ? baseFamily + ((a >> 20) & 0xff) : baseFamily;
  const model = baseFamily === 0x6 || baseFamily === 0xf ? baseModel | (((a >> 16) & 0xf) << 4) : baseModel;
  const flags = X86_CPUID.flags.map(f => f[0]).join(' ');
  return [
    `processor\t: ${cpu}`, `vendor_id\t: ${X86_CPUID.vendor}`, `cpu family\t: ${family}`, `model\t\t: ${model}`,
    'model name\t: unknown', `stepping\t: ${stepping}`,
    'physical id\t: 0', `siblings\t: ${nr}`, `core id\t\t: ${cpu}`, `cpu cores\t: ${nr}`, `apicid\t\t: ${cpu}`, `initial apicid\t: ${cpu}`,
    'fpu\t\t: yes', 'fpu_exception\t: yes', `cpuid level\t: ${X86_CPUID.maxLeaf}`, 'wp\t\t: yes',
    `flags\t\t: ${flags}`, 'bugs\t\t:', 'clflush size\t: 64', 'cache_alignment\t: 64',
    'address sizes\t: 36 bits physical, 48 bits virtual', 'power management:', '', '',
  ].join('\n');
}

function a64Block(cpu: number, hwcap: bigint): string {
  const features = A64_HWCAP_STR.filter((_, i) => (hwcap >> BigInt(i)) & 1n);
  const m = A64_ID.midr;
  // loops_per_jiffy = timer rate / HZ; BogoMIPS = lpj / (500000 / HZ) . lpj / (5000 / HZ) % 100
  const lpj = A64_ID.cntfrq / HZ;
  const bogo = `${Math.floor(lpj / (500000 / HZ))}.${String(Math.floor(lpj / (5000 / HZ)) % 100).padStart(2, '0')}`;
  return [
    `processor\t: ${cpu}`, `BogoMIPS\t: ${bogo}`, `Features\t: ${features.join(' ')}`,
    `CPU implementer\t: 0x${((m >>> 24) & 0xff).toString(16).padStart(2, '0')}`, 'CPU architecture: 8',
    `CPU variant\t: 0x${((m >>> 20) & 0xf).toString(16)}`, `CPU part\t: 0x${((m >>> 4) & 0xfff).toString(16).padStart(3, '0')}`,
    `CPU revision\t: ${m & 0xf}`, '', '',
  ].join('\n');
}

function rvBlock(cpu: number): string {
  return [
    `processor\t: ${cpu}`, `hart\t\t: ${cpu}`, `isa\t\t: ${RV_ISA}`, 'mmu\t\t: sv39',
    'mvendorid\t: 0x0', 'marchid\t\t: 0x0', 'mimpid\t\t: 0x0', '', '',
  ].join('\n');
}

export function procCpuinfo(k: Kernel): string {
  const nr = k.cpus.length;
  const out: string[] = [];
  for (let cpu = 0; cpu < nr; cpu++) {
    out.push(k.arch.name === 'x86_64' ? x86Block(cpu, nr) : k.arch.name === 'aarch64' ? a64Block(cpu, k.arch.kernel.user.hwcap) : rvBlock(cpu));
  }
  // each block ends with a blank line, as every arch's show function ends it
  return out.join('');
}
