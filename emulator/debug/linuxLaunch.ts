/**
 * Launch settings of the full-system PC (a real Linux kernel) as the
 * debugger gets them from launch.json: `kernel` (a bzImage), `initrd`,
 * `append` (the command line), `cpus`, `memory` (MiB), `vmlinux` (the
 * kernel's ELF with symbols and DWARF: function breakpoints, thread names,
 * symbols in the call stack and the Disassembly view), `sourceMap`
 * (DWARF compilation directory -> a local tree), `agent` (the agent
 * module's initramfs segment, appended to the initrd: gutter kprobes
 * registered by the guest, emulator/debug/linuxAgentProbes.ts). Each bad value is one
 * line saying which attribute and what is wrong ("launch: ...").
 */
import { readFileSync } from 'node:fs';
import type { PcRunOptions } from '../system/pcRun';

export interface LinuxLaunchSettings {
  kernel: string;
  initrd?: string;
  append?: string;
  cpus?: number;
  memory?: number;
  vmlinux?: string;
  sourceMap?: Record<string, string>;
  /** kprobe-debug's agent module packed as an initramfs segment (test/linux/agent/build-agent.sh: agent.cpio.gz), appended to the initrd */
  agent?: string;
}

/** a launch.json that asks for the full-system machine (it names a bzImage in `kernel`) */
export function isLinuxLaunch(args: object): boolean {
  return 'kernel' in args && (args as { kernel?: unknown }).kernel !== undefined;
}

export const DEFAULT_APPEND = 'console=ttyS0 nokaslr';
export const DEFAULT_MEMORY_MIB = 256;

function str(v: unknown, name: string): string | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v.length === 0) throw new Error(`launch: "${name}" must be a non-empty string`);
  return v;
}

function int(v: unknown, name: string, min: number, max: number): number | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new Error(`launch: "${name}" must be an integer in ${min}..${max}, not ${JSON.stringify(v)}`);
  return v;
}

function readFile(name: string, path: string): { name: string; data: Uint8Array } {
  try {
    return { name: path, data: new Uint8Array(readFileSync(path)) };
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw new Error(`launch: "${name}" ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (e as Error).message}`);
  }
}

/** The checked settings and the machine options they make (the files read). */
export function linuxLaunchOptions(raw: Record<string, unknown>): { settings: LinuxLaunchSettings; machine: PcRunOptions } {
  const kernelPath = str(raw.kernel, 'kernel')!;
  const initrdPath = str(raw.initrd, 'initrd');
  const append = raw.append === undefined ? DEFAULT_APPEND : typeof raw.append === 'string' ? raw.append : (() => { throw new Error('launch: "append" must be a string (the kernel command line)'); })();
  const acpi = !/(^|\s)acpi=off(\s|$)/.test(append);
  const cpus = int(raw.cpus, 'cpus', 1, 254) ?? (acpi ? 2 : 1);
  const memory = int(raw.memory, 'memory', 1, 65536) ?? DEFAULT_MEMORY_MIB;
  const vmlinux = str(raw.vmlinux, 'vmlinux');
  let sourceMap: Record<string, string> | undefined;
  if (raw.sourceMap !== undefined) {
    const m = raw.sourceMap;
    if (typeof m !== 'object' || m === null || Array.isArray(m) || Object.values(m).some(v => typeof v !== 'string')) {
      throw new Error('launch: "sourceMap" must be an object of DWARF directory -> local directory strings');
    }
    sourceMap = m as Record<string, string>;
  }
  const agent = str(raw.agent, 'agent');
  if (agent !== undefined && initrdPath === undefined) throw new Error('launch: "agent" is an initramfs segment appended to "initrd": set "initrd" too');
  const settings: LinuxLaunchSettings = { kernel: kernelPath, initrd: initrdPath, append, cpus, memory, vmlinux, sourceMap, agent };
  let initrd = initrdPath === undefined ? undefined : readFile('initrd', initrdPath);
  if (initrd && agent !== undefined) {
    // Linux unpacks every archive of a concatenated initrd into the same rootfs
    const a = readFile('agent', agent);
    const data = new Uint8Array(initrd.data.length + a.data.length);
    data.set(initrd.data);
    data.set(a.data, initrd.data.length);
    initrd = { name: `${initrd.name}+${a.name}`, data };
  }
  const machine: PcRunOptions = {
    kernel: readFile('kernel', kernelPath),
    initrd,
    cmdline: append, cpus, memoryMiB: memory, acpi,
  };
  return { settings, machine };
}
