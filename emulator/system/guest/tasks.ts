/**
 * The task a guest CPU runs and its user memory: the per-CPU `current_task`
 * (a per-CPU variable: its symbol is an offset into the per-CPU area, plus
 * __per_cpu_offset[cpu]), the task's comm and pid, and its address space
 * walked from `mm->pgd` (a direct-map address: minus page_offset_base is
 * the physical table), so a probe handler's `const char __user *` reads as
 * the process sees it.
 */
import { GuestMemory, type KernelSymbols } from './guestMemory';
import type { KernelLayout } from './kernelLayout';

export interface GuestTask { readonly addr: bigint; readonly pid: number; readonly comm: string; readonly mm: bigint }

/** a per-CPU variable's address on one CPU */
export function perCpuAddress(mem: GuestMemory, syms: KernelSymbols, name: string, cpu: number): bigint {
  const v = syms.addressOf(name), base = syms.addressOf('__per_cpu_offset');
  if (v === undefined || base === undefined) throw new Error(`the vmlinux has no per-CPU ${name}`);
  return BigInt.asUintN(64, v + mem.u64(base + BigInt(cpu) * 8n));
}

export function currentTask(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols, cpu = 0): GuestTask {
  const t = mem.u64(perCpuAddress(mem, syms, 'current_task', cpu));
  return {
    addr: t, pid: mem.i32(t + L.off('task_struct', 'pid')), comm: mem.cstring(t + L.off('task_struct', 'comm'), 16),
    mm: mem.u64(t + L.off('task_struct', 'mm')),
  };
}

/** the task's user address space (null for a kernel thread, which has no mm) */
export function userMemory(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols, task: GuestTask): GuestMemory | null {
  if (task.mm === 0n) return null;
  const pgd = mem.u64(task.mm + L.off('mm_struct', 'pgd'));
  const pob = syms.addressOf('page_offset_base');
  if (pob === undefined) throw new Error('the vmlinux has no page_offset_base');
  return mem.withTop(pgd - mem.u64(pob));
}
