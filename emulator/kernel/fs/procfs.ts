/**
 * procfs (fs/proc) as a mountable filesystem: `mounts` (the mount table,
 * fs/mounts.ts), `kallsyms` and `modules` (procKsyms.ts), `cpuinfo` (procCpuinfo.ts), `version` (Linux's linux_proc_banner, with the release
 * uname(2) gives), and `sys/...`, one file per entry of the kernel's sysctl
 * table (emulator/kernel/sysctl.ts): reading shows the entry, writing it is
 * `sysctl -w` (a bad value: -EINVAL, as proc_dointvec_minmax answers).
 * Entries registered after the mount (a subsystem that starts later)
 * appear at the next lookup, as do the per-process directories and
 * /proc/self (procPid.ts).
 */
import { Errno } from '../abi';
import type { Kernel } from '../kernel';
import { mountTable } from './mounts';
import { refreshPids } from './procPid';
import { procKallsyms, procModules } from './procKsyms';
import { procCpuinfo } from './procCpuinfo';
import { kernelCmdline } from '../printk';
import type { KernelModule } from '../modules/modules';
import { PseudoFile, addPseudoFiles, pseudoDir } from './pseudo';
import type { Inode } from './vfs';

/** the uname(2) release and version strings (emulator/kernel/user/syscalls.ts answers the same) */
export const UTS_RELEASE = '6.1.0-kprobe-debug', UTS_VERSION = '#1 SMP';

/** /proc/version: "Linux version RELEASE (BUILDER@HOST) (COMPILER) VERSION" (init/version.c linux_proc_banner) */
export function procVersion(): string {
  return `Linux version ${UTS_RELEASE} (kprobe-debug@kprobe-debug) (kprobe-debug emulator) ${UTS_VERSION}\n`;
}

/** A sysctl entry's /proc/sys file. */
function sysctlFile(k: Kernel, name: string): PseudoFile {
  return {
    show: () => k.sysctl.read(name) ?? '',
    write: text => {
      const r = k.sysctl.write(name, text);
      return r.errno ? -Errno.EINVAL : new TextEncoder().encode(text).length;
    },
  };
}

/** The root of a procfs instance of this kernel; `modules`: the loaded modules (none on a machine without module support). */
export function makeProcfs(k: Kernel, modules: () => readonly KernelModule[] = () => []): Inode {
  const fs = k.fs;
  const root = pseudoDir(fs, 0o555);
  addPseudoFiles(fs, root, {
    mounts: { show: () => mountTable(k).show() },
    version: { show: procVersion },
    // the saved command line and a newline (fs/proc/cmdline.c)
    cmdline: { show: () => `${kernelCmdline(k)}\n` },
    cpuinfo: { show: () => procCpuinfo(k) },
    kallsyms: { show: () => procKallsyms(k, modules()) },
    modules: { show: () => procModules(modules()) },
  });
  // entries registered since the last look get their file (the tree itself says which exist)
  root.refresh = () => {
    const add: Record<string, PseudoFile> = {};
    for (const name of k.sysctl.names()) {
      const path = k.sysctl.entry(name)!.procPath.replace(/^\/proc\//, '');
      let at: Inode | undefined = root;
      for (const part of path.split('/')) at = at?.children?.get(part);
      if (!at) add[path] = sysctlFile(k, name);
    }
    addPseudoFiles(fs, root, add);
    refreshPids(k, root);
  };
  root.refresh();
  return root;
}
