/**
 * A debug session's machine from its launch settings (the debugger's
 * launch.json attributes): each setting checked with a message naming it,
 * the image loaded (an ImageError names the file and the problem), the
 * machine booted with the kprobes engine configured from the settings.
 */
import * as path from 'node:path';
import { readFileSync } from 'node:fs';
import { loadElf } from '../elf/elfFile';
import { recordMachine } from '../timetravel/recorder';
import { TIME_TRAVEL_DEFAULTS } from '../timetravel/recorder';
import { Machine } from '../machine';
import { machineOptionError } from '../machineOptions';
import { HANDLER_FAULT_POLICIES, INSN_BOUNDARY_POLICIES } from '../probes';
import type { HandlerFaultPolicy, InsnBoundaryPolicy } from '../probes';

export interface LaunchSettings {
  /** the kernel ELF image */
  program: string;
  cpus?: number;
  maxInstructions?: number;
  /** debug.kprobes_optimization at boot */
  kprobesOptimization?: boolean;
  /** .kprobe files registered at boot */
  probes?: string[];
  stopOnEntry?: boolean;
  /** a handler fault its fault snippet does not handle: 'oops' (Linux, default) or 'report' */
  handlerFaults?: HandlerFaultPolicy;
  /** a kprobe address inside an instruction: 'warn' (Linux 2.6 on x86, default) or 'reject' (-EILSEQ) */
  insnBoundary?: InsnBoundaryPolicy;
  /** the machine's filesystem: a host directory's tree (never written) */
  rootfs?: string;
  /** the kernel command line ("no_hash_pointers": %p prints raw addresses) */
  cmdline?: string;
  /** cpio newc initramfs archives unpacked over it */
  initramfs?: string[];
  /** user programs the kernel starts with kp_user_init ("/bin/prog args") */
  exec?: string[];
  /** kernel modules loaded after boot ("FILE.ko name=value...") */
  modules?: string[];
  /** the block translator: true (default) or false (every instruction interpreted, for comparison) */
  translate?: boolean;
  /** record the run for reverse execution (stepBack, reverseContinue): true (default) or false */
  record?: boolean;
  /** ceiling of the recording's snapshots in MiB (default 512) */
  recordMemoryMB?: number;
  /** with a recording: stop at power-off instead of ending the session (the adapter's concern) */
  stopAtExit?: boolean;
}

/** Why settings (as the client sent them: any JSON) are not acceptable, or undefined when they are. */
export function launchSettingsError(s: Partial<Record<keyof LaunchSettings, unknown>>): string | undefined {
  if (typeof s.program !== 'string' || s.program === '') return '"program" must name a kernel ELF image';
  for (const name of ['cpus', 'maxInstructions'] as const) {
    const err = s[name] === undefined ? undefined : machineOptionError(name, s[name]);
    if (err) return err;
  }
  if (s.recordMemoryMB !== undefined && (typeof s.recordMemoryMB !== 'number' || !Number.isInteger(s.recordMemoryMB) || s.recordMemoryMB < 16 || s.recordMemoryMB > 65536)) {
    return `"recordMemoryMB" must be an integer from 16 to 65536, got ${JSON.stringify(s.recordMemoryMB)}`;
  }
  for (const name of ['kprobesOptimization', 'stopOnEntry', 'translate', 'record', 'stopAtExit'] as const) {
    if (s[name] !== undefined && typeof s[name] !== 'boolean') return `"${name}" must be true or false, got ${JSON.stringify(s[name])}`;
  }
  for (const [name, allowed] of [['handlerFaults', HANDLER_FAULT_POLICIES], ['insnBoundary', INSN_BOUNDARY_POLICIES]] as const) {
    const v = s[name];
    if (v !== undefined && !(allowed as readonly unknown[]).includes(v)) {
      return `"${name}" must be ${allowed.map(a => `"${a}"`).join(' or ')}, got ${JSON.stringify(v)}`;
    }
  }
  if (s.probes !== undefined && (!Array.isArray(s.probes) || s.probes.some(f => typeof f !== 'string'))) {
    return `"probes" must be an array of .kprobe file paths, got ${JSON.stringify(s.probes)}`;
  }
  if (s.cmdline !== undefined && typeof s.cmdline !== 'string') return `"cmdline" must be a string such as "no_hash_pointers", got ${JSON.stringify(s.cmdline)}`;
  if (s.rootfs !== undefined && (typeof s.rootfs !== 'string' || s.rootfs === '')) return `"rootfs" must name a directory, got ${JSON.stringify(s.rootfs)}`;
  for (const name of ['initramfs', 'exec', 'modules'] as const) {
    const v = s[name];
    if (v !== undefined && (!Array.isArray(v) || v.some(f => typeof f !== 'string'))) {
      const what = name === 'exec' ? 'command lines such as "/bin/prog arg"' : name === 'modules' ? 'module files with parameters such as "hello.ko n=1"' : 'cpio archive paths';
      return `"${name}" must be an array of strings (${what}), got ${JSON.stringify(v)}`;
    }
  }
  return undefined;
}

/** Boot the machine of checked settings; throws an Error ("launch: ...") or an ImageError. */
export function bootForDebug(s: Partial<Record<keyof LaunchSettings, unknown>>): Machine {
  const err = launchSettingsError(s);
  if (err) throw new Error(`launch: ${err}`);
  const ok = s as LaunchSettings;
  const image = loadElf(path.resolve(ok.program));
  const m = new Machine(image, {
    cpus: ok.cpus, maxInstructions: ok.maxInstructions, kprobes: { optimization: ok.kprobesOptimization ?? true },
    probes: { handlerFaults: ok.handlerFaults, insnBoundary: ok.insnBoundary },
    rootfs: ok.rootfs === undefined ? undefined : path.resolve(ok.rootfs),
    initramfs: ok.initramfs?.map(f => path.resolve(f)), exec: ok.exec,
    translate: ok.translate, cmdline: ok.cmdline,
  });
  if (ok.record !== false) recordMachine(m, { maxBytes: (ok.recordMemoryMB ?? TIME_TRAVEL_DEFAULTS.maxBytes / 1048576) * 1048576 });
  return m;
}

/**
 * insmod the launch's modules (in order; each init runs when the machine
 * runs). Returns the lines for the Debug Console: one per module that could
 * not be loaded (Linux's message) or whose init failed later (`report`).
 */
export function loadLaunchModules(m: Machine, specs: readonly string[], report: (line: string) => void): void {
  for (const spec of specs) {
    const [file, ...params] = spec.trim().split(/\s+/);
    const abs = path.resolve(file);
    let bytes: Uint8Array;
    try { bytes = new Uint8Array(readFileSync(abs)); } catch (e) {
      report(`insmod ${file}: cannot read the file (${(e as { code?: string }).code ?? String(e)})`);
      continue;
    }
    try {
      const mod = m.modules.load(bytes, abs, params, err => { if (err) report(`insmod ${file}: ${err}`); });
      report(`insmod ${file}: module ${mod.name} at ${'0x' + mod.core.lo.toString(16)}`);
    } catch (e) {
      report(`insmod ${file}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
}
