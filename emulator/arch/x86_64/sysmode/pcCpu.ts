/**
 * The x86_64 system half as the full-system PC's run loop sees it
 * (emulator/system/types.ts SystemCpuPort), reached through
 * arch/registry.ts's systemCpuPort(): system/ is arch-neutral code and
 * imports no architecture's implementation.
 */
import type { Memory } from '../../../memory/memory';
import type { LongModeStart, SystemCpuHandle, SystemCpuPort, SystemCpuRun, SystemPlatform } from '../../../system/types';
import type { X86Cpu } from '../cpu';
import { createSystemCpu, runSystemCpu } from './systemCpu';

class X86SystemCpu implements SystemCpuHandle {
  constructor(readonly cpu: X86Cpu) {}
  get id(): number { return this.cpu.id; }
  get instret(): number { return this.cpu.instret; }
  pc(): bigint { return this.cpu.getPc(); }
  reg(n: number): bigint { return (BigInt(this.cpu.hi[n] >>> 0) << 32n) | BigInt(this.cpu.lo[n] >>> 0); }
  setLog(log: (line: string) => void): void { this.cpu.sys!.log = log; }
}

export const pcCpuPort: SystemCpuPort = {
  create(id: number, phys: Memory, platform: SystemPlatform, start: LongModeStart): SystemCpuHandle {
    return new X86SystemCpu(createSystemCpu(id, phys, platform, start));
  },
  run(cpu: SystemCpuHandle, budget: number): SystemCpuRun {
    return runSystemCpu((cpu as X86SystemCpu).cpu, budget);
  },
};
