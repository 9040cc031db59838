/**
 * The per-CPU state of the kprobes engine: kprobe_ctlblk (Linux's per-CPU
 * variable of kernel/kprobes.c) and the pt_regs view of each CPU that the
 * handlers are given.
 */
import type { ArchOps, Cpu } from '../arch/types';
import { KprobeCtlblk, newCtlblk } from './kprobe';
import { PtRegs } from './ptRegs';

export class KprobeCpus {
  private readonly regsViews = new Map<Cpu, PtRegs>();
  /** the last view asked for per CPU id (a fast path of regsOf on every hit) */
  private readonly regsById: PtRegs[] = [];

  /** `ctlblks`: the probe table's per-CPU control blocks by CPU id */
  constructor(private readonly arch: ArchOps, private readonly ctlblks: KprobeCtlblk[]) {}

  /** per-CPU kprobe_ctlblk (made at its first use) */
  ctlblk(cpu: number): KprobeCtlblk {
    let k = this.ctlblks[cpu];
    if (!k) { k = newCtlblk(); this.ctlblks[cpu] = k; }
    return k;
  }

  /** the pt_regs view of a CPU */
  regsOf(cpu: Cpu): PtRegs {
    const id = cpu.id;
    const byId = id >= 0 ? this.regsById[id] : undefined;
    if (byId !== undefined && byId.cpu === cpu) return byId;
    let r = this.regsViews.get(cpu);
    if (!r) { r = new PtRegs(cpu, this.arch); this.regsViews.set(cpu, r); }
    if (id >= 0) this.regsById[id] = r;
    return r;
  }
}
