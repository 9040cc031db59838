/**
 * User-written probes in user programs on the uprobes engine, to trace and
 * debug user space as well as the kernel:
 *
 *   uprobe PATH:0xOFF / PATH:symbol+off { pre { ... } fault { ... } }
 *   uretprobe PATH:symbol { entry { ... } return { ... } }
 *   p:GRP/NAME PATH:OFFSET, r:GRP/NAME PATH:OFFSET   (uprobe_events lines)
 *   a debugger breakpoint in a user program's source (mode 'uprobe')
 *
 * The target is resolved in the machine's filesystem (the path's inode) and
 * the program's ELF (a symbol's file offset: its address minus its
 * PT_LOAD segment's address plus the segment's file offset, as perf probe
 * computes uprobe offsets). Each probe is one uprobe_consumer: its handler
 * runs the `pre` / `entry` snippet, its ret_handler the `return` snippet,
 * with the user task's registers, `current` (pid, comm) and the user
 * address space for memory reads. A handler fault goes where a kprobe
 * handler's would (probes/invoke.ts): the `fault` snippet first, then the
 * HandlerFaultPolicy ('oops' the CPU, or 'report' and go on).
 */
import type { CompileOptions, CompiledHandler, HandlerFault, HandlerKind, ProbeSpec, ProbeTarget } from '../handlers';
import type { KernelApi } from '../kernel/types';
import { BreakpointRuntime, evaluate } from './breakpoints';
import { programGlobals, programNamesAt, programTypes } from './programNames';
import type { Kernel } from '../kernel/kernel';
import type { Inode } from '../kernel/fs/vfs';
import { parsedImage } from '../kernel/user/process';
import type { Kprobe, PtRegs } from '../kprobes';
import { hex } from '../memory/address';
import { didYouMean, similarSymbols } from '../elf';
import type { UprobeConsumer, UprobesEngine } from '../uprobes';
import { ProbeHandlerEnv } from './env';
import { DEFAULT_HANDLER_FAULTS, HandlerFaultPolicy, asInt, oopsForHandlerFault, runCaught, trapnrForFault } from './invoke';
import { emitTraceEvent } from '../tracing/events';

const PT_LOAD = 1;
const PF_X = 1;

/** A user target resolved: the file and the offset of the probed instruction in it. */
export interface UserTargetResolved {
  inode: Inode;
  path: string;
  offset: bigint;
  /** the instruction's address in the program's ELF (where a process maps it), when a segment holds the offset */
  vaddr?: bigint;
  /** "symbol+0xoff" of vaddr in the program, when its symbol table has one */
  where?: string;
  /** that symbol and offset */
  symbol?: string;
  symOffset?: bigint;
  /** the file offset of the probe's reference counter (uprobe_events' `(REF_CTR_OFFSET)`) */
  refCtr?: bigint;
}

/** Resolve `PATH:0xOFF` / `PATH:symbol+off` in the machine's filesystem; a message naming file and offset otherwise. */
export function resolveUserTarget(kernel: Kernel, t: Extract<ProbeTarget, { kind: 'user' }>): UserTargetResolved | string {
  const fs = kernel.fs;
  const r = fs.lookup(t.path, fs.root);
  if (!r.ok) return `${t.path}: no such file in the machine's filesystem (give it with --rootfs / --initramfs or the launch's rootfs)`;
  if (!r.inode.isReg) return `${t.path}: not a regular file`;
  const inode = r.inode;
  let image;
  try { image = parsedImage(inode, t.path); } catch (e) { return `${t.path}: not an ELF program (${e instanceof Error ? e.message : String(e)})`; }
  let offset: bigint;
  let vaddr: bigint | undefined;
  if (t.symbol !== undefined) {
    const sym = image.symbols.lookup(t.symbol);
    if (!sym) return `${t.path} has no symbol '${t.symbol}'${didYouMean(similarSymbols(image.symbols, t.symbol))}`;
    vaddr = sym.value + (t.symOffset ?? 0n);
    const v = vaddr;
    const seg = image.segments.find(s => s.type === PT_LOAD && v >= s.vaddr && v < s.vaddr + s.filesz);
    if (!seg) return `${t.path}: ${t.symbol}+0x${(t.symOffset ?? 0n).toString(16)} (${hex(v)}) is in no loadable segment of the file`;
    offset = v - seg.vaddr + seg.offset;
  } else {
    offset = t.offset ?? 0n;
    const o = offset;
    const seg = image.segments.find(s => s.type === PT_LOAD && (s.flags & PF_X) !== 0 && o >= s.offset && o < s.offset + s.filesz);
    if (seg) vaddr = seg.vaddr + (o - seg.offset);
  }
  const at = vaddr !== undefined ? image.symbols.resolve(vaddr) : undefined;
  const ref = t.refCtr ? { refCtr: t.refCtr } : {};
  return at
    ? { inode, path: t.path, offset, vaddr, where: `${at.sym.name}+0x${at.offset.toString(16)}`, symbol: at.sym.name, symOffset: at.offset, ...ref }
    : { inode, path: t.path, offset, vaddr, ...ref };
}

/** The text uprobe_events shows for a probe: "/bin/app:0x0000000000001136". */
export function uprobeEventTarget(path: string, offset: bigint): string {
  return `${path}:0x${offset.toString(16).padStart(16, '0')}`;
}

export interface UserProbeContext {
  kernel: Kernel;
  uprobes: UprobesEngine;
  handlerFaults?: HandlerFaultPolicy;
  charge?: (cpu: number, steps: number) => void;
}

/** The struct kprobe fields a uprobe handler sees as `p`: the probed address (the process's), symbol and offset. */
function probeView(res: UserTargetResolved, regsIp: bigint): Kprobe {
  return { addr: regsIp, symbol_name: res.symbol, offset: res.symOffset ?? res.offset, nmissed: 0, flags: 0 };
}

/** A handler env for a user task's registers (no kprobes engine: no calls into the kernel image). */
export function userEnv(ctx: UserProbeContext, regs: PtRegs, kp?: Kprobe, trapnr?: number): ProbeHandlerEnv {
  return new ProbeHandlerEnv({ kernel: ctx.kernel, regs, kp, beforeInsn: true, charge: ctx.charge, trapnr });
}

/**
 * The consumer of a probe-file uprobe / uretprobe (or uprobe_events line).
 * `label` names the probe in fault lines ("x.kprobe:3:1: uprobe /bin/app:leaf").
 */
export function buildFileUprobeConsumer(ctx: UserProbeContext, spec: ProbeSpec, res: UserTargetResolved, label: string): UprobeConsumer {
  const h = spec.handlers;
  const policy = ctx.handlerFaults ?? DEFAULT_HANDLER_FAULTS;
  const run = (handler: CompiledHandler, regs: PtRegs): bigint => {
    const kp = probeView(res, regs.ip);
    const r = runCaught(handler, userEnv(ctx, regs, kp));
    if ('value' in r) return r.value;
    // the fault snippet first (uprobe pre faults), then the policy
    const f = r.fault;
    if (h.fault && handler.kind === 'pre') {
      const fr = runCaught(h.fault, userEnv(ctx, regs, kp, trapnrForFault(ctx.kernel, f.kind)));
      if ('value' in fr && asInt(fr.value) !== 0) return 0n;
    }
    const text = faultText(label, handler.kind, f, regs.ip);
    if (f.kind === 'budget' || policy === 'report') ctx.kernel.printk(regs.cpu.id, text, 'emulator');
    else oopsForHandlerFault(ctx.kernel, regs.cpu, f, text);
    return 0n;
  };
  const uc: UprobeConsumer = {};
  const def = spec.event?.def;
  if (def) {
    // a uprobe_events line: the trace line of the event with its fetch arguments (emulator/tracing/events)
    const fileOffset = res.offset;
    if (spec.kind === 'uretprobe') uc.ret_handler = (_uc, func, regs) => { emitTraceEvent(ctx.kernel, def, userEnv(ctx, regs, probeView(res, func)), { kind: 'uretprobe', addr: func, retAddr: regs.ip, fileOffset }); return 0; };
    else uc.handler = (_uc, regs) => { emitTraceEvent(ctx.kernel, def, userEnv(ctx, regs, probeView(res, regs.ip)), { kind: 'uprobe', addr: regs.ip, fileOffset }); return 0; };
    return uc;
  }
  const pre = spec.kind === 'uprobe' ? h.pre : h.entry;
  if (pre) uc.handler = (_uc, regs) => { run(pre, regs); return 0; };
  const ret = h.return;
  if (spec.kind === 'uretprobe') uc.ret_handler = (_uc, _func, regs) => { if (ret) run(ret, regs); return 0; };
  return uc;
}

/** "x.kprobe:7:5: pre handler of uprobe /bin/app:leaf faulted at 0x401136: <what>" */
function faultText(label: string, handler: HandlerKind, f: HandlerFault, ip: bigint): string {
  const [file, rest] = splitLabel(label);
  return `${file}:${f.line}:${f.column}: ${handler} handler of ${rest} faulted at ${hex(ip)}: ${f.message}`;
}

function splitLabel(label: string): [string, string] {
  const m = /^(.*):\d+:\d+: (.*)$/.exec(label);
  return m ? [m[1], m[2]] : [label, ''];
}

/**
 * The consumer of a debugger breakpoint in a user program: a uprobe that
 * stops at the probed instruction, or a uretprobe that stops at the return
 * with the value; the condition / hit condition / log message decide (bp).
 */
export function buildBreakpointConsumer(kernel: KernelApi, bp: BreakpointRuntime, where: string, kind: 'uprobe' | 'uretprobe'): UprobeConsumer {
  const who = (cpu: number): string => `${kernel.current(cpu)?.comm ?? '?'}[${kernel.current(cpu)?.pid ?? 0}]`;
  if (kind === 'uretprobe') {
    return {
      ret_handler: (_uc, func, regs) => {
        const cpu = regs.cpu.id;
        if (!evaluate(bp, () => new ProbeHandlerEnv({ kernel, regs, kp: { addr: func }, charge: bp.charge }), cpu, () => where)) return 0;
        const rv = regs.returnValue;
        bp.onStop({
          breakpointId: bp.id, probeId: -bp.id, mode: 'kretprobe', cpu, addr: func, where, reportPc: regs.ip, returnValue: rv,
          hitCount: bp.hits, description: `return from ${where} = ${hex(rv)} to ${hex(regs.ip)} (uretprobe, ${who(cpu)})`,
        });
        return 0;
      },
    };
  }
  return {
    handler: (_uc, regs) => {
      const cpu = regs.cpu.id;
      if (!evaluate(bp, () => new ProbeHandlerEnv({ kernel, regs, kp: { addr: regs.ip }, beforeInsn: true, charge: bp.charge }), cpu, () => where)) return 0;
      const addr = regs.ip;
      bp.onStop({
        breakpointId: bp.id, probeId: -bp.id, mode: 'kprobe', cpu, addr, where, reportPc: addr, hitCount: bp.hits,
        description: `breakpoint at ${where} (uprobe, ${who(cpu)})`,
      });
      return 0;
    },
  };
}

/** A user breakpoint's condition and log message name the program's variables in scope at the probe (its DWARF). */
export function userProgramNames(copts: CompileOptions, res: UserTargetResolved, arch: KernelApi['arch']): void {
  try {
    const prog = parsedImage(res.inode, res.path);
    copts.programName = (res.vaddr !== undefined ? programNamesAt(prog, arch, res.vaddr) : undefined) ?? programGlobals(prog, res.vaddr);
    copts.programType = programTypes(prog);
  } catch { /* no DWARF to name */ }
}
