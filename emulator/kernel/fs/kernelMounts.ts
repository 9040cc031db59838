/**
 * The kernel's own filesystems and where user space finds them: the types
 * `proc`, `sysfs`, `debugfs` and `tracefs` registered in the mount table
 * (tmpfs is always there), and the mounts a Linux distribution's init
 * makes before anything else runs (systemd's mount_table, Debian's
 * initramfs-tools): proc on /proc, sysfs on /sys, debugfs on
 * /sys/kernel/debug, tracefs on /sys/kernel/tracing and, as Linux's
 * debugfs automounts it, on /sys/kernel/debug/tracing, all
 * nosuid,nodev,noexec. Missing mount points are made (the rootfs of a test
 * need not have /proc and /sys).
 */
import type { Kernel } from '../kernel';
import type { KernelModule } from '../modules/modules';
import { KprobesDebugSource, makeDebugfs } from './debugfs';
import { MS_NODEV, MS_NOEXEC, MS_NOSUID, mountTable } from './mounts';
import { makeProcfs } from './procfs';
import { addPseudoFiles, pseudoDir } from './pseudo';
import type { Inode } from './vfs';

const FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC;

/**
 * `kprobes`: the kprobes engine's debugfs files (null: no probes engine);
 * `tracefs`: makes a tracefs tree (the tracing subsystem's, handed in by
 * the machine: emulator/tracing/tracefs.ts).
 */
export function mountKernelFilesystems(k: Kernel, kprobes: () => KprobesDebugSource | null, tracefs: () => Inode,
  modules: () => readonly KernelModule[] = () => []): void {
  const t = mountTable(k);
  t.registerType('proc', () => makeProcfs(k, modules));
  t.registerType('sysfs', fs => {
    const root = pseudoDir(fs);
    addPseudoFiles(fs, root, { 'kernel/debug': pseudoDir(fs, 0o700), 'kernel/tracing': pseudoDir(fs, 0o700) });
    return root;
  });
  t.registerType('debugfs', fs => makeDebugfs(fs, kprobes, () => k.blacklist()));
  t.registerType('tracefs', tracefs);
  const mounts: [string, string][] = [['proc', '/proc'], ['sysfs', '/sys'], ['debugfs', '/sys/kernel/debug'], ['tracefs', '/sys/kernel/tracing'], ['tracefs', '/sys/kernel/debug/tracing']];
  for (const [type, path] of mounts) {
    const rc = t.mountAt(path, type, type, FLAGS);
    if (rc) throw new Error(`mounting ${type} on ${path}: errno ${-rc}`);
  }
}
