/**
 * What the Kprobes, Uprobes, Modules and Debug Registers views ask of the
 * target (the `_probe*` requests, adapter/probeRequests.ts): the rows, the
 * debugfs files, memory with or without the probes' patches, enabling and
 * removing probes, the global knobs (kprobes/enabled,
 * debug.kprobes_optimization), insmod / rmmod.
 */
import type { DebugMemory, DebugTarget } from '../emulator/debug/index';
import type { ProbeDebugfsBody, ProbeStateBody } from './dapCustom';
import type { ProbeBridge } from './probeBridge';

export class ProbeControls {
  /** where a module's later failure (its init returned an error) is reported (the session's console) */
  onModuleError?: (line: string) => void;

  constructor(private readonly target: DebugTarget, private readonly bridge: ProbeBridge, private readonly onChange: () => void) {}

  state(): ProbeStateBody {
    return this.bridge.rows();
  }

  /** /sys/kernel/debug/kprobes/{list,enabled} as the engine prints them. */
  debugfs(): ProbeDebugfsBody {
    const p = this.target.probes;
    return { list: p.debugfsList(), enabled: p.kprobesEnabled ? '1\n' : '0\n' };
  }

  /** Kernel memory as the client sees it (debug facade): probed code reads as its original bytes. */
  memoryView(): DebugMemory {
    return this.target.memory();
  }

  setEnabled(id: number, on: boolean): void { this.bridge.setEnabled(id, on); }
  unregister(id: number): void { this.bridge.unregister(id); }

  /** insmod from the Modules view: loaded now (the init runs when the machine runs); a refusal is the error */
  loadModule(file: string, params: readonly string[]): void {
    this.target.loadModule(file, params, err => this.onModuleError?.(`insmod ${file}: ${err}`));
    this.onChange();
  }

  /** rmmod from the Modules view: the exit runs when the machine runs; a refusal is the error */
  unloadModule(name: string): void {
    const err = this.target.unloadModule(name, e => this.onModuleError?.(`rmmod ${name}: ${e}`));
    if (err) throw new Error(err);
    this.onChange();
  }

  setGlobalEnabled(on: boolean): void {
    const r = this.target.probes.writeKprobesEnabled(on ? '1' : '0');
    if (r !== 0) throw new Error(`writing kprobes/enabled failed: ${r}`);
    this.onChange();
  }

  /** sysctl -w debug.kprobes_optimization=0|1, through the kernel's sysctl table */
  setOptimization(on: boolean): void {
    this.target.setKprobesOptimization(on);
    this.onChange();
  }
}
