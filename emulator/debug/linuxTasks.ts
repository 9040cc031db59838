/**
 * The task a CPU of the full-system PC runs, as Linux knows it: the per-CPU
 * variable `current_task` (Linux 6.1 x86: DEFINE_PER_CPU in
 * arch/x86/kernel/cpu/common.c; the vmlinux symbol is its offset in the
 * per-CPU area, which GS points at in the kernel), then `comm` and `pid`
 * of the task_struct it points to, at the offsets the vmlinux DWARF gives.
 * The type is looked up once (the first name lookup builds the DWARF name
 * index: seconds on Debian's vmlinux).
 */
import type { ElfImage } from '../elf/types';
import { typeNamed } from '../elf/dwarf/ctype';
import { findMember } from '../handlers/ctypes';
import type { GuestPages } from './linuxPages';

export interface LinuxTask { address: bigint; comm: string; pid: number }

interface Layout { currentTask: bigint; comm: number; pid: number }

export class LinuxTasks {
  private layout: Layout | null | undefined;

  constructor(private readonly vmlinux: ElfImage) {}

  /** where current_task and task_struct's comm / pid are, or null when the vmlinux lacks them */
  private layoutOf(): Layout | null {
    if (this.layout !== undefined) return this.layout;
    this.layout = null;
    const cur = this.vmlinux.symbols.lookup('current_task');
    if (!cur) return null;
    let t;
    try { t = typeNamed(this.vmlinux, 'struct', 'task_struct'); } catch { return null; }
    if (!t || t.kind !== 'struct') return null;
    const comm = findMember(t, 'comm'), pid = findMember(t, 'pid');
    if (!comm || !pid) return null;
    this.layout = { currentTask: cur.value, comm: comm.offset, pid: pid.offset };
    return this.layout;
  }

  /** the task on the CPU whose per-CPU area is at `perCpuBase`, or undefined (no DWARF, not readable yet: early boot) */
  current(pages: GuestPages, perCpuBase: bigint): LinuxTask | undefined {
    const l = this.layoutOf();
    if (!l || perCpuBase === 0n) return undefined;
    const task = pages.read64(BigInt.asUintN(64, perCpuBase + l.currentTask));
    if (task === undefined || task === 0n) return undefined;
    const comm = pages.read(task + BigInt(l.comm), 16);
    const pidBytes = pages.read(task + BigInt(l.pid), 4);
    if (comm.length < 16 || pidBytes.length < 4) return undefined;
    const end = comm.indexOf(0);
    const name = new TextDecoder('latin1').decode(comm.subarray(0, end < 0 ? 16 : end));
    return { address: task, comm: name, pid: new DataView(pidBytes.buffer, pidBytes.byteOffset, 4).getInt32(0, true) };
  }
}
