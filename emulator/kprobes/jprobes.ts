/**
 * Jprobes (Linux 2.6 API): a kprobe at a function entry whose pre-handler
 * saves the registers and the top of the stack, runs the entry handler with
 * the probed function's arguments, then restores both (setjmp_pre_handler /
 * jprobe_return / longjmp_break_handler folded into one step, because the
 * entry handler is a host function, not emulated code). The probed
 * instruction is then single-stepped and the function runs normally.
 */
import { Errno } from '../kernel/abi';
import { errnoOf, fieldFailure, KprobeRegResult, regFailed } from './regResult';
import { funcEntryAddr } from './addressChecks';
import type { KprobeHitPath } from './hitPath';
import type { HandlerOnCpuGate } from './onCpuGate';
import type { KprobesShared } from './parts';
import type { ProbeTable } from './probeTable';
import type { KprobeRegistration } from './registration';
import { JprobeReturn } from './errors';
import { validateArray, validateJprobe } from './validate';
import type { Jprobe, Kprobe } from './kprobe';
import type { PtRegs } from './ptRegs';
import { mustVAddr } from '../memory/address';

/** MAX_STACK_SIZE (x86: 64 bytes) of stack saved around the handler */
export const JPROBE_MAX_STACK_SIZE = 64;

export class Jprobes {
  constructor(
    private readonly shared: Pick<KprobesShared, 'kernel' | 'hooks' | 'ctx' | 'code'>,
    private readonly t: Pick<ProbeTable, 'isRegistered' | 'kindOf'>,
    private readonly registration: Pick<KprobeRegistration, 'registerKprobeResult' | 'unregisterKprobes'>,
    /** the handler invocation: the jprobe's kind, a failing entry handler, the hit log's name, the running entries' depth */
    private readonly hits: Pick<KprobeHitPath, 'setKind' | 'handlerFailed' | 'names' | 'jprobeDepth'>,
    private readonly gate: Pick<HandlerOnCpuGate, 'chain'>,
  ) {}

  /** register_jprobe(): the address must be a function's first byte */
  register(jp: Jprobe): KprobeRegResult {
    const v = validateJprobe(jp);
    if (v) return fieldFailure(v, 'struct jprobe');
    if (this.t.isRegistered(jp.kp)) return regFailed(-Errno.EINVAL, 'the probe is already registered');
    const addr = funcEntryAddr(this.shared, jp.kp, 'jprobe', offset => offset === 0n);
    if (typeof addr !== 'bigint') return addr;
    const kp = jp.kp;
    const saved = { pre: kp.pre_handler, post: kp.post_handler, kind: this.t.kindOf(kp) };
    kp.pre_handler = (p, regs) => this.setjmpPreHandler(jp, p, regs);
    kp.post_handler = undefined;
    this.hits.setKind(kp, 'j');
    const r = this.registration.registerKprobeResult(kp);
    if (r) {
      kp.pre_handler = saved.pre;
      kp.post_handler = saved.post;
      this.hits.setKind(kp, saved.kind);
    }
    return r;
  }

  registerMany(jps: Jprobe[]): number {
    if (!validateArray(jps)) return -Errno.EINVAL;
    for (let i = 0; i < jps.length; i++) {
      const r = errnoOf(this.register(jps[i]));
      if (r < 0) {
        if (i > 0) this.unregisterMany(jps.slice(0, i));
        return r;
      }
    }
    return 0;
  }

  unregisterMany(jps: Jprobe[]): void {
    if (!Array.isArray(jps)) return;
    this.registration.unregisterKprobes(jps.filter(j => typeof j === 'object' && j !== null).map(j => j.kp));
  }

  private setjmpPreHandler(jp: Jprobe, p: Kprobe, regs: PtRegs): number {
    const cpu = regs.cpu;
    const kernel = this.shared.kernel;
    if (kernel.probeHit !== undefined) kernel.probeHit('jprobe', cpu.id, p.id ?? 0, p.addr ?? 0n, this.hits.names.get(p));
    const saved = cpu.saveContext();
    const sp = regs.sp;
    const task = this.shared.kernel.current(cpu.id);
    let n = JPROBE_MAX_STACK_SIZE;
    if (task && sp < task.stackTop && sp >= task.stackBase) n = Math.min(n, Number(task.stackTop - sp));
    let stack: Uint8Array | null = null;
    try { stack = cpu.mem.readBytes(mustVAddr(sp), n); } catch { stack = null; }
    const args = this.shared.kernel.arch.abi.argRegs.map(i => cpu.getReg(i));
    // longjmp_break_handler: the probed function sees its own stack and registers again
    const longjmp = (): void => {
      if (stack) cpu.mem.writeBytes(mustVAddr(sp), stack, 'engine');
      cpu.restoreContext(saved);
    };
    let deferred = false;
    this.hits.jprobeDepth++;
    try {
      // guarded(), with jprobe_return()'s unwinding caught here first (one throw per hit, not a rethrow)
      try {
        jp.entry(args, regs);
      } catch (e) {
        if (!(e instanceof JprobeReturn)) this.hits.handlerFailed(p, regs, e);
      }
      // a C entry the debugger stops in runs on the CPU: the longjmp once it returns
      deferred = this.gate.chain(cpu, () => { longjmp(); return 0; });
    } finally {
      this.hits.jprobeDepth--;
      if (!deferred) longjmp();
    }
    return 0;
  }
}
