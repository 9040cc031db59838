/**
 * procfs's per-process directories: /proc/<pid>/ for every live user
 * process (fs/proc/base.c) and /proc/self, the link to the caller's own:
 *
 *   status   "Name:\tcomm", Umask, State, Tgid, Ngid, Pid, PPid, TracerPid,
 *            Uid, Gid as proc_pid_status begins (every process is root)
 *   stat     do_task_stat's one line of 52 fields: pid, (comm), state,
 *            ppid, pgrp, session, tty 0, tpgid -1, ..., priority 20, nice 0,
 *            num_threads 1, vsize (bytes mapped), rss (pages), exit_signal
 *            17 (SIGCHLD), processor; the counters the emulated kernel does
 *            not keep (faults, times, start time, addresses) are 0
 *   maps     the process's mappings (user/procMaps.ts)
 *   exe      a link to the executable's path
 *   cmdline  the argv strings as they are in the process's memory now
 *            (mm->arg_start..arg_end, each with its NUL); empty for a zombie
 *
 * The directories follow the process list at each lookup (a process that
 * ended is gone); `self` is pointed at the pid of the task running the
 * system call that walks /proc.
 */
import type { Kernel } from '../kernel';
import type { UserProcess } from '../user/process';
import { procMaps } from '../user/procMaps';
import { PERM_U } from '../../memory/memory';
import { copyFromUser } from '../user/uaccess';
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

function stat(k: Kernel, p: UserProcess): string {
  const state = stateOf(k, p)[0];
  let vsize = 0;
  for (const r of p.mm.allRegions()) if ((r.perms & PERM_U) !== 0) vsize += r.size;
  const f = [
    p.pid, `(${p.comm.slice(0, 15)})`, state, p.parent?.pid ?? 0, p.pgid, p.sid, 0, -1, 0,
    0, 0, 0, 0, 0, 0, 0, 0, 20, 0, 1, 0, 0, vsize, Math.ceil(vsize / 4096), '18446744073709551615',
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 17, p.task.cpu, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, p.waitStatus ?? 0,
  ];
  return `${f.join(' ')}\n`;
}

/** proc_pid_cmdline_read: the bytes of the argument area (empty once the process is a zombie or when unreadable) */
function cmdline(p: UserProcess): string {
  const { start, end } = p.args;
  if (p.waitStatus !== null || end <= start) return '';
  const b = copyFromUser(p.mm, start, Number(end - start));
  return b ? new TextDecoder('latin1').decode(b) : '';
}

function pidDir(k: Kernel, p: UserProcess): Inode {
  const fs = k.fs;
  const d = pseudoDir(fs, 0o555);
  addPseudoFiles(fs, d, {
    stat: { show: () => stat(k, p) },
    status: { show: () => status(k, p) },
    maps: { show: () => procMaps(k, p) },
    cmdline: { show: () => cmdline(p) },
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
