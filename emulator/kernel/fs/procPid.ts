/**
 * procfs's per-process directories: /proc/<pid>/ for every live user
 * process (fs/proc/base.c) and /proc/self, the link to the caller's own:
 *
 *   status   "Name:\tcomm", Umask, State, Tgid, Ngid, Pid, PPid, TracerPid,
 *            Uid, Gid as proc_pid_status begins (every process is root)
 *   maps     the process's mappings (user/procMaps.ts)
 *   exe      a link to the executable's path
 *
 * The directories follow the process list at each lookup (a process that
 * ended is gone); `self` is pointed at the pid of the task running the
 * system call that walks /proc.
 */
import type { Kernel } from '../kernel';
import type { UserProcess } from '../user/process';
import { procMaps } from '../user/procMaps';
import { addPseudoFiles, pseudoDir, pseudoLink } from './pseudo';
import type { Inode } from './vfs';

/** proc_pid_status's State letters by what the task is doing */
function stateOf(k: Kernel, p: UserProcess): string {
  if (p.waitStatus !== null) return 'Z (zombie)';
  const cur = k.currentTask(k.clock.activeCpu);
  if (cur === p.task || p.task.state === 'runnable') return 'R (running)';
  return 'S (sleeping)';
}

function status(k: Kernel, p: UserProcess): string {
  return [
    `Name:\t${p.comm.slice(0, 15)}`, `Umask:\t${p.umask.toString(8).padStart(4, '0')}`, `State:\t${stateOf(k, p)}`,
    `Tgid:\t${p.pid}`, 'Ngid:\t0', `Pid:\t${p.pid}`, `PPid:\t${p.parent?.pid ?? 0}`, 'TracerPid:\t0',
    'Uid:\t0\t0\t0\t0', 'Gid:\t0\t0\t0\t0', '',
  ].join('\n');
}

function pidDir(k: Kernel, p: UserProcess): Inode {
  const fs = k.fs;
  const d = pseudoDir(fs, 0o555);
  addPseudoFiles(fs, d, {
    status: { show: () => status(k, p) },
    maps: { show: () => procMaps(k, p) },
    exe: pseudoLink(fs, ''),
  });
  return d;
}

/** Bring /proc's pid directories and `self` up to date (the procfs root's refresh). */
export function refreshPids(k: Kernel, root: Inode): void {
  const fs = k.fs;
  const live = new Map<string, UserProcess>();
  for (const [pid, p] of k.processes) if (p.waitStatus === null) live.set(String(pid), p);
  for (const name of [...root.children!.keys()]) {
    if (/^\d+$/.test(name) && !live.has(name)) { root.children!.delete(name); root.nlink--; }
  }
  for (const [name, p] of live) {
    let d = root.children!.get(name);
    if (!d) { d = pidDir(k, p); fs.link(root, name, d); }
    // execve changes the executable
    const exe = d.children!.get('exe')!;
    exe.target = p.exeLink();
    exe.size = new TextEncoder().encode(exe.target).length;
  }
  const cur = k.currentTask(k.clock.activeCpu);
  const self = cur && k.processes.get(cur.pid) ? String(cur.pid) : '';
  let link = root.children!.get('self');
  if (!link) { link = pseudoLink(fs, self); fs.link(root, 'self', link); }
  link.target = self;
  link.size = self.length;
}
