/**
 * /proc/PID/maps of a user process: one line per mapping, as Linux's
 * show_map_vma prints it:
 *
 *   00400000-00402000 r-xp 00000000 00:01 12                           /bin/prog
 *   7fffe000-7ffff000 r-xp 00000000 00:00 0                            [uprobes]
 *
 * A file mapping shows the file's inode, offset and path; the private
 * copies of file pages that uprobes (or mprotect) made stay part of their
 * file mapping (the kernel's mapOrigins), as a vma keeps vm_file when its
 * pages are copied on write. Neighbouring regions that continue the same
 * mapping are one line.
 */
import { PERM_R, PERM_U, PERM_W, PERM_X, Region } from '../../memory/memory';
import type { Kernel } from '../kernel';
import type { UserProcess } from './process';

interface Line { lo: number; hi: number; perms: number; inode: bigint; path: string; offset: bigint; name: string; shared: boolean }

export function procMaps(k: Kernel, proc: UserProcess): string {
  const lines: Line[] = [];
  for (const r of proc.mm.allRegions()) {
    if ((r.perms & PERM_U) === 0) continue;
    const l = lineOf(k, proc, r);
    const prev = lines[lines.length - 1];
    if (prev && prev.hi === l.lo && prev.perms === l.perms && prev.name === l.name && prev.inode === l.inode
      && (l.inode === 0n || prev.offset + BigInt(prev.hi - prev.lo) === l.offset)) { prev.hi = l.hi; continue; }
    lines.push(l);
  }
  return lines.map(format).join('');
}

function lineOf(k: Kernel, proc: UserProcess, r: Region): Line {
  const origin = k.mapOrigins.get(r);
  const backing = origin?.backing ?? r.backing;
  const id = backing.identity;
  const base = origin ? origin.offset : r.offset;
  const shared = proc.shared.has(r);
  if (id.kind === 'file') {
    const path = proc.exe && proc.exe.ino === id.inode ? proc.exeLink() : id.path;
    return { lo: r.base, hi: r.end, perms: r.perms, inode: id.inode, path, offset: backing.fileOffset + BigInt(base), name: id.path, shared };
  }
  const name = r.name.startsWith('[') ? r.name : '';
  return { lo: r.base, hi: r.end, perms: r.perms, inode: 0n, path: name, offset: 0n, name, shared };
}

function format(l: Line): string {
  const perms = `${l.perms & PERM_R ? 'r' : '-'}${l.perms & PERM_W ? 'w' : '-'}${l.perms & PERM_X ? 'x' : '-'}${l.shared ? 's' : 'p'}`;
  const head = `${hex(l.lo)}-${hex(l.hi)} ${perms} ${l.offset.toString(16).padStart(8, '0')} ${l.inode ? '00:01' : '00:00'} ${l.inode}`;
  return l.path ? `${head.padEnd(73)}${l.path}\n` : `${head}\n`;
}

const hex = (v: number): string => v.toString(16).padStart(8, '0');
