/**
 * The x86_64 system half as the full-system PC's run loop sees it
 * (emulator/system/types.ts SystemCpuPort), reached through
 * arch/registry.ts's systemCpuPort(): system/ is arch-neutral code and
 * imports no architecture's implementation.
 */
import type { Memory } from '../../../memory/memory';
import type { LongModeStart, SystemCpuDebug, SystemCpuHandle, SystemCpuPort, SystemCpuRun, SystemPlatform } from '../../../system/types';
import type { X86Cpu } from '../cpu';
import { createSystemCpu, runSystemCpu, systemOf } from './systemCpu';
import { DEBUGGER_SLOT0 } from './delivery';
import { fromVAddr, mustVAddr, toVAddr } from '../../../memory/address';

class X86SystemCpu implements SystemCpuHandle {
  constructor(readonly cpu: X86Cpu) {}
  get id(): number { return this.cpu.id; }
  get instret(): number { return this.cpu.instret; }
  pc(): bigint { return this.cpu.getPc(); }
  reg(n: number): bigint { return (BigInt(this.cpu.hi[n] >>> 0) << 32n) | BigInt(this.cpu.lo[n] >>> 0); }
  setLog(log: (line: string) => void): void { this.cpu.sys!.log = log; }
  private view: SystemCpuDebug | null = null;
  get debug(): SystemCpuDebug { return this.view ??= x86Debug(this.cpu); }
}

// ---- the debugger's view of the CPU (system/types.ts SystemCpuDebug) ----
const KERNEL_HALF = 0xffff800000000000n;
const GPR = ['rax', 'rbx', 'rcx', 'rdx', 'rsi', 'rdi', 'rbp', 'rsp', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15'];
const GPR_NUM = [0, 3, 1, 2, 6, 7, 5, 4, 8, 9, 10, 11, 12, 13, 14, 15];
const h64 = (v: bigint): string => `0x${BigInt.asUintN(64, v).toString(16).padStart(16, '0')}`;
const hx = (v: number | bigint): string => `0x${v.toString(16)}`;

function x86Debug(cpu: X86Cpu): SystemCpuDebug {
  const max = 31 - DEBUGGER_SLOT0;
  let watches = 0;
  return {
    maxBreakpoints: max,
    registers: () => {
      const s = systemOf(cpu);
      const reg = (n: number): bigint => (BigInt(cpu.hi[n] >>> 0) << 32n) | BigInt(cpu.lo[n] >>> 0);
      return [
        ...GPR.map((name, i) => ({ name, value: h64(reg(GPR_NUM[i])) })),
        { name: 'rip', value: h64(cpu.getPc()) }, { name: 'rflags', value: hx(cpu.getRflags()) },
        ...([['cs', s.cs], ['ss', s.ss], ['ds', s.ds], ['es', s.es], ['fs', s.fs], ['gs', s.gs]] as const).map(([name, v]) => ({ name, value: hx(v) })),
        { name: 'fs_base', value: h64(fromVAddr(cpu.fsBase)) }, { name: 'gs_base', value: h64(fromVAddr(cpu.gsBase)) },
        { name: 'kernel_gs_base', value: h64(fromVAddr(s.kernelGsBase)) },
        { name: 'cr0', value: hx(s.cr0 >>> 0) }, { name: 'cr2', value: h64(fromVAddr(s.cr2)) }, { name: 'cr3', value: hx(s.cr3) },
        { name: 'cr4', value: hx(s.cr4) }, { name: 'cr8', value: hx(s.cr8) }, { name: 'efer', value: hx(s.efer) },
        { name: 'gdtr', value: `${h64(fromVAddr(s.gdtBase))} limit ${hx(s.gdtLimit)}` }, { name: 'idtr', value: `${h64(fromVAddr(s.idtBase))} limit ${hx(s.idtLimit)}` },
        { name: 'tr', value: hx(s.tr) }, { name: 'cpl', value: String(s.cs & 3) },
      ];
    },
    pageTableRoot: () => BigInt(systemOf(cpu).cr3) & 0x000ffffffffff000n,
    perCpuBase: () => {
      const gs = fromVAddr(cpu.gsBase);
      return gs >= KERNEL_HALF ? gs : fromVAddr(systemOf(cpu).kernelGsBase);
    },
    setRegister: (name, value) => {
      const v = BigInt.asUintN(64, value);
      const i = GPR.indexOf(name);
      if (i >= 0) { const n = GPR_NUM[i]; cpu.lo[n] = Number(v & 0xffffffffn) | 0; cpu.hi[n] = Number(v >> 32n) | 0; return undefined; }
      if (name === 'rip') { if (toVAddr(v) === null) return `${h64(v)} is not a canonical address`; cpu.setPc(v); return undefined; }
      if (name === 'rflags') { if (v > 0xffffffffn) return `rflags is 32 bits wide here: ${h64(v)}`; cpu.setRflags(Number(v)); return undefined; }
      return `${name} cannot be changed from the debugger (general registers, rip and rflags can)`;
    },
    setBreakpoints: addrs => {
      if (addrs.length + watches > max) throw new RangeError(`at most ${max} debugger breakpoints and watchpoints (${watches} watchpoints)`);
      for (let k = 0; k < max - watches; k++) {
        const a = addrs[k];
        cpu.hw.setSlot(DEBUGGER_SLOT0 + k, a === undefined ? null : { lo: mustVAddr(a), len: 1, exec: true, read: false, write: false });
      }
    },
    // watchpoints take the debugger's slots from the top down
    setWatchpoints: list => {
      if (list.length > max) throw new RangeError(`at most ${max} debugger watchpoints`);
      for (let i = 0; i < Math.max(list.length, watches); i++) {
        const w = list[i];
        cpu.hw.setSlot(DEBUGGER_SLOT0 + max - 1 - i, w === undefined ? null : { lo: mustVAddr(w.addr), len: w.len, exec: false, read: w.read, write: w.write });
      }
      watches = list.length;
    },
    resume: skipOnce => {
      const s = systemOf(cpu);
      if (s.event?.kind === 'debugBreak') s.event = null;
      if (skipOnce) cpu.resumeFlag = true;
    },
  };
}

export const pcCpuPort: SystemCpuPort = {
  create(id: number, phys: Memory, platform: SystemPlatform, start: LongModeStart): SystemCpuHandle {
    return new X86SystemCpu(createSystemCpu(id, phys, platform, start));
  },
  run(cpu: SystemCpuHandle, budget: number): SystemCpuRun {
    return runSystemCpu((cpu as X86SystemCpu).cpu, budget);
  },
};
