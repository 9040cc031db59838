/**
 * A probe from a .kprobe file (a compiled ProbeSpec) turned into engine
 * registrations with the kernel's callback signatures:
 *
 *   kprobe    -> struct kprobe per site: pre_handler / post_handler /
 *                fault_handler running the pre / post / fault snippets;
 *   kretprobe -> struct kretprobe: entry_handler / handler running the entry /
 *                return snippets, maxactive and data_size from the attributes;
 *   jprobe    -> struct jprobe whose entry runs the body (returning from it
 *                is jprobe_return()).
 *
 * `disabled` registers the probe with KPROBE_FLAG_DISABLED set (listed as
 * [DISABLED], armed by enable). Every registration gets a fault_handler so
 * that a handler fault takes the engine's fault path and the probe goes on
 * (see invoke.ts).
 */
import type { CompiledHandler, HandlerFault, HandlerKind, ProbeSpec } from '../handlers';
import type { KernelApi } from '../kernel/types';
import type { Kprobe, KprobeFaultHandler, KprobesEngine, KretprobeInstance, PtRegs } from '../kprobes';
import { EnvInput, ProbeHandlerEnv } from './env';
import { FaultGate, asInt, runInProbe, trapnrForFault } from './invoke';
import { EngineProbeKind, SiteRegistration, newKprobe } from './register';
import type { ProbeSite } from './targets';
import { targetText, whereOf } from './targets';

export interface FileProbeContext {
  kernel: KernelApi;
  engine: KprobesEngine;
}

/** Text that names a probe in messages: "examples/probes/x.kprobe:3:1: kprobe do_fork". */
export function fileProbeLabel(fileName: string, spec: ProbeSpec): string {
  return `${fileName}:${spec.line}:${spec.column}: ${spec.kind} ${targetText(spec.target)}`;
}

/** Build the (not yet registered) engine objects of a probe-file probe, one per site. */
export function buildFileProbeSites(ctx: FileProbeContext, spec: ProbeSpec, fileName: string, sites: ProbeSite[]): SiteRegistration[] {
  const gate = new FaultGate();
  const label: FaultLabel = { fileName, probe: `${spec.kind} ${targetText(spec.target)}` };
  const h = spec.handlers;
  const disabled = spec.attrs.disabled === true;
  const env = (input: Omit<EnvInput, 'kernel' | 'engine'>): ProbeHandlerEnv => new ProbeHandlerEnv({ kernel: ctx.kernel, engine: ctx.engine, ...input });
  const run = (handler: CompiledHandler, input: Omit<EnvInput, 'kernel' | 'engine'>): bigint => runInProbe(handler, env(input), gate);
  const faultHandler = faultHandlerFor(ctx, gate, label, h.fault, env);
  return sites.map(site => {
    const kp = newKprobe(site, disabled);
    kp.fault_handler = faultHandler;
    const kind: EngineProbeKind = spec.kind;
    const reg: SiteRegistration = { site, kind, kp, registered: false, errno: 0 };
    switch (spec.kind) {
      case 'kprobe': {
        const pre = h.pre, post = h.post;
        if (pre) kp.pre_handler = (p, regs) => (asInt(run(pre, { kp: p, regs, beforeInsn: true })) !== 0 ? 1 : 0);
        if (post) kp.post_handler = (p, regs, flags) => { run(post, { kp: p, regs, postFlags: BigInt(flags) }); };
        break;
      }
      case 'kretprobe': {
        const entry = h.entry, ret = h.return;
        reg.rp = {
          kp,
          maxactive: spec.attrs.maxactive ?? 0,
          data_size: spec.attrs.data_size ?? 0,
          entry_handler: entry ? (ri: KretprobeInstance, regs: PtRegs) => asInt(run(entry, { kp: ri.rp.kp, ri, regs, beforeInsn: true })) : undefined,
          handler: ret ? (ri: KretprobeInstance, regs: PtRegs) => { run(ret, { kp: ri.rp.kp, ri, regs }); return 0; } : undefined,
        };
        break;
      }
      case 'jprobe': {
        const body = h.jprobe;
        reg.jp = { kp, entry: (_args, regs) => { if (body) run(body, { kp, regs, beforeInsn: true }); } };
        break;
      }
    }
    return reg;
  });
}

/**
 * The fault_handler of a probe-file probe. A parked handler fault: report it,
 * run the user's fault snippet (trapnr per the fault kind), return 1 (the
 * probe goes on). A real fault while single-stepping: the user's fault
 * snippet decides (its return value), none = not handled.
 */
function faultHandlerFor(ctx: FileProbeContext, gate: FaultGate, label: FaultLabel, fault: CompiledHandler | undefined,
  env: (input: Omit<EnvInput, 'kernel' | 'engine'>) => ProbeHandlerEnv): KprobeFaultHandler {
  const runUserFault = (p: Kprobe, regs: PtRegs, trapnr: number): number => {
    if (!fault) return 0;
    const inner = new FaultGate();
    try {
      return asInt(runInProbe(fault, env({ kp: p, regs, trapnr }), inner)) !== 0 ? 1 : 0;
    } catch (e) {
      const f = inner.take();
      if (!f) throw e;
      report(ctx, regs, label, 'fault', f.fault, p);
      return 0;
    }
  };
  return (p, regs, trapnr) => {
    const pending = gate.take();
    if (!pending) return runUserFault(p, regs, trapnr);
    const f = pending.fault;
    report(ctx, regs, label, pending.handler, f, p);
    runUserFault(p, regs, trapnrForFault(ctx.kernel, f.kind));
    return 1;
  };
}

interface FaultLabel { fileName: string; probe: string }

/** "x.kprobe:7:5: pre handler of kprobe do_fork faulted at do_fork+0x0: <what> (trap N)" on the console */
function report(ctx: FileProbeContext, regs: PtRegs, label: FaultLabel, handler: HandlerKind, f: HandlerFault, p: Kprobe): void {
  const at = p.addr !== undefined ? ` at ${whereOf(ctx.kernel.image, p.addr)}` : '';
  const name = handler === 'jprobe' ? 'jprobe body' : `${handler} handler`;
  ctx.kernel.printk(regs.cpu.id, `${label.fileName}:${f.line}:${f.column}: ${name} of ${label.probe} faulted${at}: ${f.message}`, 'emulator');
}
