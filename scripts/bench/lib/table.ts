/**
 * The emulated-speed table the CPU and user-space bench sections print:
 * instructions, seconds, M instructions/s, qemu-user's time on the same
 * ELF and the ratio. (scripts/bench.mjs runs only the .ts files directly
 * in scripts/bench/, so this one is a library, not a section.)
 */
export interface Row { name: string; instructions: number; seconds: number; qemu?: number; ok: string }

export function fmt(rows: Row[], first = 'program'): string {
  const head = [first, 'instructions', 'seconds', 'M insn/s', 'qemu-user s', 'ratio', 'result'];
  const body = rows.map(r => [
    r.name, String(r.instructions), r.seconds.toFixed(3), (r.instructions / r.seconds / 1e6).toFixed(2),
    r.qemu === undefined ? '-' : r.qemu.toFixed(3), r.qemu === undefined ? '-' : `${(r.seconds / r.qemu).toFixed(1)}x`, r.ok,
  ]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map(b => b[i].length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 || i === 6 ? c.padEnd(w[i]) : c.padStart(w[i]))).join('  ');
  return [line(head), w.map(n => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n');
}
