/**
 * What CR0.EM, CR0.TS, CR0.MP and CR4.OSFXSR do to the x87 and SSE
 * instructions on a CPU with the system half (SDM vol. 3 2.5 "CR0", 9.1,
 * 13.1; vol. 2's exception tables per instruction class):
 *
 *   x87 (d8-df)                 EM or TS: #NM
 *   wait / fwait (9b)           MP and TS: #NM
 *   fxsave / fxrstor            EM or TS: #NM
 *   SSE / SSE2 (and ldmxcsr, stmxcsr)  EM or OSFXSR clear: #UD; else TS: #NM
 *
 * movnti, clflush and the prefetches are not checked (the SDM lists no #NM
 * and no EM/OSFXSR case for them). The check runs at execution, before the
 * instruction touches anything, every time (CR0 changes through CLTS and MOV
 * CR0 need no code-cache flush). A CPU without the system half (the
 * emulated-kernel machine's) runs them as before.
 */
import type { X86Cpu } from '../cpu';
import type { ExecFn, FpuClass, Insn, OpDef } from '../insn';
import { CR0_EM, CR0_MP, CR0_TS, CR4_OSFXSR } from '../sysmode/state';
import { X86Exception, VEC_NM, VEC_UD } from '../sysmode/exception';
import * as sse from './sse';
import * as sseInt from './sseInt';
import * as sseFp from './sseFp';
import * as x87 from './x87';

const X87: ReadonlySet<unknown> = new Set(Object.values(x87));
const SSE: ReadonlySet<unknown> = new Set([...Object.values(sse), ...Object.values(sseInt), ...Object.values(sseFp)]);

/** the class of a table entry for these checks, or undefined when none applies */
export function fpuClassOf(def: OpDef): FpuClass | undefined {
  if (def.code === '9b') return 'wait';
  if (X87.has(def.exec)) return 'x87';
  if (def.exec === sse.fxsave || def.exec === sse.fxrstor) return 'fxsr';
  if (def.exec === sse.movnti) return undefined;
  return SSE.has(def.exec) ? 'sse' : undefined;
}

/** #NM / #UD as CR0 and CR4 say for an instruction of class `c` */
export function fpuCheck(cpu: X86Cpu, c: FpuClass, i: Insn): void {
  const s = cpu.sys;
  if (s === null) return;
  const cr0 = s.cr0;
  if ((cr0 & (CR0_EM | CR0_TS)) === 0 && (c !== 'sse' || (s.cr4 & CR4_OSFXSR) !== 0)) return;
  const name = i.def.mnem;
  switch (c) {
    case 'wait':
      if ((cr0 & (CR0_MP | CR0_TS)) === (CR0_MP | CR0_TS)) throw new X86Exception(VEC_NM, -1, 'fwait with CR0.MP and CR0.TS set');
      return;
    case 'x87': case 'fxsr':
      throw new X86Exception(VEC_NM, -1, `${name} with CR0.${(cr0 & CR0_EM) !== 0 ? 'EM' : 'TS'} set`);
    default:
      if ((cr0 & CR0_EM) !== 0) throw new X86Exception(VEC_UD, -1, `${name} with CR0.EM set`);
      if ((s.cr4 & CR4_OSFXSR) === 0) throw new X86Exception(VEC_UD, -1, `${name} with CR4.OSFXSR clear`);
      if ((cr0 & CR0_TS) !== 0) throw new X86Exception(VEC_NM, -1, `${name} with CR0.TS set`);
  }
}

/** `exec` behind the check of its class */
export function fpuGated(exec: ExecFn, c: FpuClass): ExecFn {
  return (cpu: X86Cpu, i: Insn): void => { fpuCheck(cpu, c, i); exec(cpu, i); };
}
