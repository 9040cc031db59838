/**
 * Observers of user address spaces (Linux's uprobe_mmap, uprobe_dup_mmap
 * and uprobe_clear_state call sites): the kernel tells them when a program
 * image is mapped into a process's new address space (the first process,
 * exec), when fork copied one, and when one goes away (exec replaced it,
 * the process ended).
 */
import type { Memory, Region } from '../../memory/memory';
import type { UserProcess } from './process';

export interface UserMmObserver {
  /** proc.mm now holds a freshly mapped program image (exec, the first process) */
  imageMapped?(proc: UserProcess): void;
  /** mmap(2) mapped part of a file into proc.mm (uprobe_mmap for that vma) */
  fileMapped?(proc: UserProcess, region: Region): void;
  /** fork copied parent.mm into child.mm */
  forked?(parent: UserProcess, child: UserProcess): void;
  /** `mm`, proc's address space until now, is gone (exec replaced it, or the process ended) */
  mmReleased?(proc: UserProcess, mm: Memory): void;
}
