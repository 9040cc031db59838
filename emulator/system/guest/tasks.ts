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

/** every thread-group leader on the guest's task list (init_task.tasks), init_task itself first */
export function eachTask(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols): GuestTask[] {
  const init = syms.addressOf('init_task');
  if (init === undefined) throw new Error('the vmlinux has no init_task');
  const oTasks = L.off('task_struct', 'tasks');
  const task = (t: bigint): GuestTask => ({
    addr: t, pid: mem.i32(t + L.off('task_struct', 'pid')), comm: mem.cstring(t + L.off('task_struct', 'comm'), 16),
    mm: mem.u64(t + L.off('task_struct', 'mm')),
  });
  const out = [task(init)];
  const head = init + oTasks;
  for (let l = mem.u64(head); l !== head && l !== 0n && out.length < 1_000_000; l = mem.u64(l)) out.push(task(l - oTasks));
  return out;
}

/** include/linux/sched/coredump.h: the mm has had a uprobe's breakpoint installed */
export const MMF_HAS_UPROBES = 19n;

/** the tasks whose address space has uprobes installed, with the inode of the program each runs (mm->exe_file) */
export function tasksWithUprobes(mem: GuestMemory, L: KernelLayout, syms: KernelSymbols): { task: GuestTask; exeInode: bigint }[] {
  const out: { task: GuestTask; exeInode: bigint }[] = [];
  for (const t of eachTask(mem, L, syms)) {
    if (t.mm === 0n || (mem.u64(t.mm + L.off('mm_struct', 'flags')) >> MMF_HAS_UPROBES & 1n) === 0n) continue;
    const exe = mem.u64(t.mm + L.off('mm_struct', 'exe_file'));
    out.push({ task: t, exeInode: exe === 0n ? 0n : mem.u64(exe + L.off('file', 'f_inode')) });
  }
  return out;
}
