/**
 * Launch settings of the full-system PC (a real Linux kernel) as the
 * debugger gets them from launch.json: `kernel` (a bzImage), `initrd`,
 * `append` (the command line), `cpus`, `memory` (MiB), `vmlinux` (the
 * kernel's ELF with symbols and DWARF: function breakpoints, thread names,
 * symbols in the call stack and the Disassembly view), `sourceMap`
 * (DWARF compilation directory -> a local tree), `agent` (the agent
 * module's initramfs segment, appended to the initrd: gutter kprobes
 * registered by the guest, emulator/debug/linuxAgentProbes.ts), `insmod`
 * (true: the debugger inserts the `modules` itself at boot, before the
 * initramfs's init: linuxModuleInsmod.ts). Each bad value is one
 * line saying which attribute and what is wrong ("launch: ...").
 */
import { readFileSync } from 'node:fs';
import type { PcRunOptions } from '../system/pcRun';
import { insmodArchive, insmodCmdline } from './linuxModuleInsmod';
import { linuxModulePaths } from './linuxModuleDebug';

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
  /** the debugger inserts the launch's `modules` at boot (linuxModuleInsmod.ts) */
  insmod?: boolean;
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

/** a .ko the guest's insmod can take: an x86_64 ELF relocatable object */
function checkKo(path: string, d: Uint8Array): void {
  const elf = d.length >= 20 && d[0] === 0x7f && d[1] === 0x45 && d[2] === 0x4c && d[3] === 0x46;
  if (!elf || d[4] !== 2 || d[5] !== 1) throw new Error(`launch: "modules" ${path}: not a 64-bit little-endian ELF file (a Kbuild-built .ko)`);
  const type = d[16] | (d[17] << 8), machine = d[18] | (d[19] << 8);
  if (type !== 1) throw new Error(`launch: "modules" ${path}: not a relocatable object (ELF type ${type}): a kernel module is one`);
  if (machine !== 62) throw new Error(`launch: "modules" ${path}: built for ELF machine ${machine}, not x86_64 (62)`);
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
  if (raw.insmod !== undefined && typeof raw.insmod !== 'boolean') throw new Error(`launch: "insmod" must be true or false (true: the debugger inserts the "modules" at boot), not ${JSON.stringify(raw.insmod)}`);
  const insmod = raw.insmod === true;
  const modules = insmod ? linuxModulePaths(raw.modules, vmlinux !== undefined) : [];
  if (insmod && modules.length === 0) throw new Error('launch: "insmod" inserts the launch\'s "modules": name the .ko files there');
  if (insmod && initrdPath === undefined) throw new Error('launch: "insmod" appends the "modules" to "initrd" as one more archive: set "initrd" too');
  const settings: LinuxLaunchSettings = { kernel: kernelPath, initrd: initrdPath, append, cpus, memory, vmlinux, sourceMap, agent, insmod };
  let initrd = initrdPath === undefined ? undefined : readFile('initrd', initrdPath);
  if (initrd && agent !== undefined) {
    // Linux unpacks every archive of a concatenated initrd into the same rootfs
    const a = readFile('agent', agent);
    const data = new Uint8Array(initrd.data.length + a.data.length);
    data.set(initrd.data);
    data.set(a.data, initrd.data.length);
    initrd = { name: `${initrd.name}+${a.name}`, data };
  }
  let cmdline = append;
  if (initrd && insmod) {
    const kos = modules.map(p => { const f = readFile('modules', p); checkKo(p, f.data); return { path: p, data: f.data }; });
    const rd = insmodCmdline(append);
    cmdline = rd.cmdline;
    // a plain (uncompressed) archive must start 4-byte aligned: Linux skips the zeros before it
    const archive = insmodArchive(kos, rd.init);
    const at = Math.ceil(initrd.data.length / 4) * 4;
    const data = new Uint8Array(at + archive.length);
    data.set(initrd.data);
    data.set(archive, at);
    initrd = { name: `${initrd.name}+modules`, data };
  }
  const machine: PcRunOptions = {
    kernel: readFile('kernel', kernelPath),
    initrd,
    cmdline, cpus, memoryMiB: memory, acpi,
  };
  return { settings, machine };
}
