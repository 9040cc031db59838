/** e_machine -> architecture name (as Linux/LLVM spell them). */
const MACHINES: Readonly<Record<number, string | { 32: string; 64: string }>> = {
  2: 'sparc',
  3: 'i386',
  4: 'm68k',
  8: { 32: 'mips', 64: 'mips64' },
  10: 'mips',
  15: 'parisc',
  18: 'sparc',
  20: 'ppc',
  21: 'ppc64',
  22: { 32: 's390', 64: 's390x' },
  40: 'arm',
  42: 'sh',
  43: 'sparc64',
  50: 'ia64',
  62: 'x86_64',
  83: 'avr',
  92: 'openrisc',
  94: 'xtensa',
  164: 'hexagon',
  183: 'aarch64',
  243: { 32: 'riscv32', 64: 'riscv64' },
  247: 'bpf',
  258: 'loongarch64',
};

/** Name of an ELF machine; unknown machines are named 'em<N>'. */
export function machineName(machine: number, elfClass: 32 | 64): string {
  const m = MACHINES[machine];
  if (m === undefined) return `em${machine}`;
  return typeof m === 'string' ? m : m[elfClass];
}
