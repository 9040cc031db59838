/**
 * The debug facade: the one door between a debugger front end (the DAP
 * adapter) and the machine. A front end boots a DebugTarget (target.ts)
 * from launch settings and talks to it in the debugger's terms; it imports
 * values from this file only (and types from anywhere below).
 */
import { bootForDebug } from './launch';
import type { LaunchSettings } from './launch';
import { MachineTarget } from './machineTarget';
import type { DebugTarget } from './target';
import { linuxLaunchOptions } from './linuxLaunch';
import { LinuxTarget } from './linuxTarget';
import { LinuxModuleDebug, linuxModulePaths } from './linuxModuleDebug';

/** Boot the target of checked launch settings (as the client sent them); throws an Error ("launch: ...") or an ImageError. */
export function launchTarget(settings: Partial<Record<keyof LaunchSettings, unknown>>): DebugTarget {
  return new MachineTarget(bootForDebug(settings));
}

/** Boot the full-system PC (a real Linux kernel) from launch settings with `kernel`; throws an Error ("launch: ...") */
export function launchLinuxTarget(settings: Record<string, unknown>): LinuxTarget {
  const { settings: s, machine } = linuxLaunchOptions(settings);
  const modules = linuxModulePaths(settings.modules, s.vmlinux !== undefined);
  const t = new LinuxTarget(s, machine);
  if (modules.length > 0) t.moduleDebug = new LinuxModuleDebug(modules, t.vmlinux!);
  return t;
}

export { MachineTarget } from './machineTarget';
export { LinuxTarget } from './linuxTarget';
export type { LinuxEnd, LinuxRegister, LinuxStop } from './linuxTarget';
export type { LinuxBreakpoint } from './linuxBreakpoints';
export type { LinuxFrame } from './linuxOrc';
export { isLinuxLaunch } from './linuxLaunch';
export type {
  DebugProbes, DebugTarget, EvaluateRequest, ProbeChange, RowsContext,
} from './target';
export { launchSettingsError } from './launch';
export type { LaunchSettings } from './launch';
export { formatAddress, parseAddress } from './addresses';
export { MAX_DISASSEMBLY_ROWS } from './disassembly';
export type { DisassemblyRow } from './disassembly';
export { breakpointModeOf } from './resolver';
export type { BreakpointParts, BreakpointPlacement, BreakpointRequestSpec, BreakpointResolution } from './resolver';
export { hitsSince, histogramRows, histogramInfo, bucketRange } from './hitQueries';
export type { HistogramRow, HitLogView } from './hitQueries';
export { RI_DATA_GONE } from './stoppedEnv';
export type { ProbeStop } from './stoppedEnv';
export { IDLE_FRAME, THREAD_RETURN_FRAME } from '../kernel/stack';
export type { EmulatorCodeKind } from '../kernel/stack';
export { taskAddress } from '../kernel/task';
export type { EmulatorCode, WalkedFrame } from './frames';
export type { RegisterRow } from './registers';
export type { EvaluateAnswer, EvaluateBody } from './evaluate';
export type { RunEnd, RunController } from './runControl';
export type { StepKind, Stepper } from './stepper';
export type { TravelStop, SessionTimeTravel, MachineChange } from './timeTravel';
export type { DebugMemory } from './memory';
export type { UserPrograms } from './userPrograms';
export type { SourceMap } from './sourceMap';
export type { Expandable, FrameState, FrameVariable, FrameVariables } from './variables';
export type { InlineFrame } from '../elf/dwarf/scopes';
export type * from './rows';
export type { HitRecord, MissWarning } from '../trace/hitLog';
export type { BreakpointHit, BreakpointMode, ProbeEntry } from '../probes';
export type { DataBreakpointRequest } from '../probes/manager';
export type { ProbeTarget } from '../handlers';
export type { PrintkRecord, Task } from '../kernel/types';
export type { DataTarget } from '../probes/dataTarget';
export type { ElfImage } from '../elf/types';
