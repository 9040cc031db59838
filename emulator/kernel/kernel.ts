/**
 * The emulated kernel: boots an image (maps its segments, lays out the exec
 * and stack areas, starts start_kernel on CPU 0), owns the tasks and the
 * scheduler, answers hypercalls, dispatches traps (hooks first, then its own
 * handling, else an oops) and keeps the printk log. Implements KernelApi,
 * the only view the kprobes engine has of it.
 *
 * Task numbering: pid 0 is the idle task of every CPU (current() returns
 * undefined then, Comm "swapper/N" in reports); pid 1 is the first task
 * ("init": start_kernel's context on CPU 0, or the user program of a
 * user-mode machine); threads created by the image get 2, 3, ... in creation
 * order. When task 1 ends, the machine powers off with its exit code
 * (returning from start_kernel = power off 0).
 *
 * Thread return: every thread starts with its return address set to
 * `threadReturnAddress`, the first page of the exec area, which is mapped
 * without any permission. Returning from a thread function fetches there;
 * the kernel recognises that exec fault as "thread returned" (exit code 0).
 */
import type { JitRunner } from '../cpu/interp';
import { SysctlTable } from './sysctl';
import { machineOption } from '../machineOptions';
import { ArchOps, Cpu, Trap } from '../arch/types';
import { ElfImage } from '../elf/types';
import { X86_EFLAGS_IF } from '../arch/x86_64/info';
import { SR_SIE } from '../arch/riscv64/info';
import { Memory, PERM_R, PERM_W, PERM_X, Region, MemoryFault } from '../memory/memory';
import { VAddr, fromVAddr, hex, mustVAddr, toVAddr } from '../memory/address';
import { Errno, EXCEPTION_TABLE_SECTION, KPROBE_BLACKLIST_SECTION } from './abi';
import type { ArchKernelTable } from '../arch/types';
import { TICK_NS, VirtualClock } from './clock';
import { HYPERCALLS, NO_RESULT, HypercallResult } from './hypercalls';
import { LoadedImage, mapImage } from './imageLoader';
import { formatOops } from './oops';
import { PrintkLog, PrintkListener } from './printk';
import { Scheduler } from './scheduler';
import { KTask } from './task';
import type { UserProcess } from './user/process';
import type { UserMmObserver } from './user/mmObserver';
import { Vfs } from './fs/vfs';
import type { Backing } from '../memory/backing';
import { HitKind, KernelApi, KernelLayout, MissInfo, PrintkRecord, ProbeHitSink, StopRequest, Task, TrapHook, UnwindHooks } from './types';

/** MODULE_STATE_COMING / _LIVE / _GOING as the module notifier chain reports them */
export type ModuleNotifyState = 'coming' | 'live' | 'going';
export type ModuleNotifier = (module: string, state: ModuleNotifyState) => void;

/** the flags-register bit that enables interrupts, where the CPU keeps one (arm64: DAIF clear is already unmasked) */
const IRQ_ENABLE_BIT: Readonly<Record<string, bigint>> = { x86_64: X86_EFLAGS_IF, riscv64: SR_SIE };

export const PAGE_SIZE = 4096;
/** pid of the first task; its end powers the machine off */
export const INIT_PID = 1;
export const INIT_COMM = 'init';
/** comm of a thread created with a NULL name */
export const DEFAULT_THREAD_COMM = 'kthread';

export interface KernelOptions {
  cpus: number;
  quantum: number;
  /** the block translator the CPUs run translated code with (the machine picks it: emulator/jit/index.ts); absent or null: the interpreter alone */
  translator?: JitRunner<unknown, never> | null;
}

/** Handles traps raised in user mode (installed by the user-process support). */
export type UserTrapHandler = (k: Kernel, cpu: Cpu, task: KTask, trap: Trap) => void;

export class Kernel implements KernelApi {
  readonly mem = new Memory('kernel');
  readonly cpus: Cpu[];
  readonly layout: KernelLayout;
  readonly log = new PrintkLog();
  readonly clock: VirtualClock;
  readonly sched: Scheduler;
  readonly table: ArchKernelTable;
  /** exit code once powered off */
  exitCode: number | null = null;
  /** pending debugger stop */
  stopRequest: { cpu: number; request: StopRequest } | null = null;
  oopsCount = 0;
  /** the loaded image's extent (kernel images only) */
  loaded: LoadedImage | null = null;
  userTrapHandler: UserTrapHandler | null = null;
  /** send a signal to a user process (installed with the first process; avoids an import cycle) */
  userSignal: ((p: UserProcess, sig: number) => void) | null = null;
  /** the user_init hypercall (user/init.ts; installed by the machine on a kernel image) */
  userInit: { call(cpu: Cpu, wait: boolean): HypercallResult; poweringOff(): void } | null = null;
  /** where trace_printk's text goes (the trace buffer; installed with tracefs) */
  tracePrintk: ((cpu: number, ip: bigint, text: string) => void) | null = null;
  /** a user task's system call entered (`ret` undefined) or returned: its trace events (tracing/dynevent/registry.ts) */
  traceSyscall: ((cpu: number, call: string, args: readonly bigint[], ret?: bigint) => void) | null = null;
  /** user processes by pid */
  readonly processes = new Map<number, UserProcess>();
  /** observers of user address spaces (uprobes): image mapped, fork, released */
  readonly mmObservers: UserMmObserver[] = [];
  /**
   * Regions that are private copies of file pages (uprobes breakpoints): the
   * file mapping they stand for (/proc/PID/maps shows them as part of it)
   */
  readonly mapOrigins = new Map<Region, { backing: Backing; offset: number }>();
  /**
   * The module notifier chain (register_module_notifier): told when a
   * module is coming (laid out, its symbols known, its init not yet run),
   * live, or going (its exit about to run), in registration order
   */
  readonly moduleNotifiers: ModuleNotifier[] = [];
  /** a user task whose pending signals must wait (uprobes: while it steps a probed instruction out of line) */
  readonly signalDeferrers: ((pid: number) => boolean)[] = [];
  /** sysctl entries registered by the kernel's subsystems */
  readonly sysctl = new SysctlTable();
  /** seed of the user processes' randomness (getrandom, AT_RANDOM): the same seed, the same bytes */
  randomSeed = 0n;
  /** bytes of private memory fork copied into children so far (only the pages a parent had written) */
  forkCopiedBytes = 0;
  /** the filesystem user processes see (populated by --rootfs / --initramfs, device nodes at the first process) */
  readonly fs = new Vfs();
  /**
   * Probe hits so far, every kind (probeHit): the seq of the latest hit.
   * Machine state (time travel restores it; replayed hits get their seq again).
   */
  hitSeq = 0;
  /** time travel: stop once hitSeq reaches this (0: no such stop; set only while re-executing, timetravel/recorder.ts) */
  hitStopAt = 0;
  /** Missed probe hits so far (probeMissed): machine state, as hitSeq */
  missSeq = 0;
  /** the hit log the hits go to (host-owned; Machine.hitLog), or null */
  hitLog: ProbeHitSink | null = null;
  /** machine-wide instructions retired (Machine.totalInstructions: the machine installs it) */
  instructionsRetired: () => number = () => 0;
  /** instructions of the running CPU's current run not yet accounted by the machine (KernelApi.runRetired) */
  runRetired = 0;
  /** what stack walks ask of the kprobes engine (KernelApi.unwindHooks; the machine installs them with the engine) */
  unwindHooks: UnwindHooks | null = null;

  private readonly hooks: TrapHook[] = [];
  private readonly preemptBlockers: ((cpu: number) => boolean)[] = [];
  private readonly tickHooks: (() => void)[] = [];
  private readonly roundHooks: (() => void)[] = [];
  private readonly exitListeners: ((t: Task) => void)[] = [];
  private readonly allTasks: KTask[] = [];
  private nextPid = INIT_PID + 1;
  private execNext: VAddr;
  private readonly execEnd: VAddr;
  private readonly returnPage: VAddr;
  private nextStackSlot = 0;
  private readonly scratch: Cpu;
  /** the block translator the CPUs use (null: the interpreter alone) */
  readonly translator: JitRunner<unknown, never> | null;
  private readonly warnedHypercalls = new Set<number>();
  private exTable: Map<VAddr, bigint> | null = null;
  private blacklistRanges: { start: bigint; end: bigint; name: string }[] | null = null;
  /** each loaded module's own kprobe blacklist entries (modules/blacklist.ts), in load order */
  private readonly moduleBlacklists = new Map<string, readonly { start: bigint; end: bigint; name: string }[]>();
  private blacklistAll: readonly { start: bigint; end: bigint; name: string }[] | null = null;

  constructor(readonly arch: ArchOps, readonly image: ElfImage, opts: KernelOptions, kernelImage: boolean) {
    machineOption('cpus', opts.cpus);
    this.table = arch.kernel;
    if (kernelImage) this.loaded = mapImage(this.mem, image, false);
    this.layout = this.placeAreas(this.loaded);
    const exec = mustVAddr(this.layout.execArea);
    this.returnPage = exec;
    this.mem.map(exec, PAGE_SIZE, 0, 'thread-return');
    this.mem.map(exec + PAGE_SIZE, this.layout.execAreaSize - PAGE_SIZE, PERM_R | PERM_X, 'exec-area');
    this.execNext = exec + PAGE_SIZE;
    this.execEnd = exec + this.layout.execAreaSize;
    this.cpus = [];
    for (let i = 0; i < opts.cpus; i++) this.cpus.push(arch.createCpu(i, this.mem));
    this.translator = opts.translator ?? null;
    for (const c of this.cpus) (c as unknown as { jit: unknown }).jit = this.translator;
    this.scratch = arch.createCpu(-1, this.mem);
    this.clock = new VirtualClock(opts.cpus, opts.quantum);
    this.sched = new Scheduler(this.cpus);
    this.fs.now = () => this.clock.now();
  }

  /** Exec area and stack area: the arch's preferred place, or right after the image when out of reach. */
  private placeAreas(img: LoadedImage | null): KernelLayout {
    const pref = this.table.layout;
    if (!img) return { ...pref };
    const reach = BigInt(this.table.branchReach);
    const execEnd = pref.execArea + BigInt(pref.execAreaSize);
    const within = (a: bigint): boolean => a - img.textLow < reach && img.textHigh - a < reach;
    const overlaps = (a: bigint, size: bigint): boolean => a < img.high && img.low < a + size;
    let execArea = pref.execArea;
    if (!within(pref.execArea) || !within(execEnd) || overlaps(pref.execArea, BigInt(pref.execAreaSize))) {
      execArea = (img.high + 0x1fffffn) & ~0x1fffffn;
    }
    let stackArea = pref.stackArea;
    const stackSpan = 0x40000000n;
    if (overlaps(stackArea, stackSpan) || (stackArea < execArea + BigInt(pref.execAreaSize) && execArea < stackArea + stackSpan)) {
      stackArea = execArea + BigInt(pref.execAreaSize) + 0x200000n;
    }
    return { ...pref, execArea, stackArea };
  }

  // ---- KernelApi ------------------------------------------------------------

  current(cpu: number): Task | undefined { return this.sched.rq[cpu]?.current; }
  currentTask(cpu: number): KTask | undefined { return this.sched.rq[cpu]?.current; }
  tasks(): readonly Task[] { return this.allTasks; }
  taskByPid(pid: number): KTask | undefined { return this.allTasks.find(t => t.pid === pid); }

  printk(cpu: number, text: string, source: PrintkRecord['source'] = 'kernel'): void {
    this.log.text(cpu, text, source, this.clock.now(cpu >= 0 && cpu < this.cpus.length ? cpu : -1));
  }
  onPrintk(l: PrintkListener): () => void { return this.log.onRecord(l); }

  timeNs(): bigint { return this.clock.now(); }
  jiffies(): bigint { return this.clock.jiffies(); }

  allocExec(size: number, align = 16): bigint {
    if (!Number.isInteger(size) || size <= 0) throw new RangeError(`allocExec: bad size ${size}`);
    if (!Number.isInteger(align) || align <= 0 || (align & (align - 1)) !== 0) throw new RangeError(`allocExec: bad alignment ${align}`);
    const off = this.execNext - this.returnPage;
    const start = this.returnPage + Math.ceil(off / align) * align;
    if (start + size > this.execEnd) {
      throw new RangeError(`allocExec: exec area exhausted (${size} bytes requested, ${this.execEnd - this.execNext} left of ${this.layout.execAreaSize})`);
    }
    this.execNext = start + size;
    return fromVAddr(start);
  }

  addTrapHook(hook: TrapHook): void { this.hooks.push(hook); }
  addPreemptBlocker(blocked: (cpu: number) => boolean): void { this.preemptBlockers.push(blocked); }
  addTickHook(hook: () => void): void { this.tickHooks.push(hook); }
  addRoundHook(hook: () => void): void { this.roundHooks.push(hook); }

  /** End of a scheduling round (called by the machine): the round hooks. */
  endRound(): void {
    for (const h of this.roundHooks) h();
  }
  onTaskExit(listener: (t: Task) => void): void { this.exitListeners.push(listener); }

  /** blocking_notifier_call_chain(&module_notify_list, state, mod): every module notifier, in order */
  notifyModule(name: string, state: ModuleNotifyState): void {
    for (const n of this.moduleNotifiers.slice()) n(name, state);
  }

  oops(cpu: Cpu, trap: Trap | null, message: string, detail?: readonly string[]): void {
    const rq = this.sched.rq[cpu.id];
    if (!rq || rq.dead) return;
    this.oopsCount++;
    let lines: string[];
    try {
      lines = formatOops({
        arch: this.arch, style: this.table.oops, cpu, trap, message, task: rq.current,
        symbols: this.image.symbols, serial: this.oopsCount, detail,
      });
    } catch (e) {
      lines = [`${message || 'Oops'}: 0000 [#${this.oopsCount}] (report incomplete: ${e instanceof Error ? e.message : String(e)})`];
    }
    for (const l of lines) this.printk(cpu.id, l, 'emulator');
    rq.dead = true;
  }

  /**
   * The kprobe blacklist: the image's NOKPROBE_SYMBOL list, then each
   * loaded module's entries (add_module_kprobe_blacklist appends them to
   * the list as the module comes)
   */
  blacklist(): readonly { start: bigint; end: bigint; name: string }[] {
    if (!this.blacklistAll) this.blacklistAll = [...this.imageBlacklist(), ...[...this.moduleBlacklists.values()].flat()];
    return this.blacklistAll;
  }

  /** a module's blacklist entries as it comes; null: dropped as it goes (remove_module_kprobe_blacklist) */
  setModuleBlacklist(module: string, entries: readonly { start: bigint; end: bigint; name: string }[] | null): void {
    if (entries) this.moduleBlacklists.set(module, entries);
    else this.moduleBlacklists.delete(module);
    this.blacklistAll = null;
  }

  private imageBlacklist(): readonly { start: bigint; end: bigint; name: string }[] {
    if (this.blacklistRanges) return this.blacklistRanges;
    const out: { start: bigint; end: bigint; name: string }[] = [];
    const sec = this.image.section(KPROBE_BLACKLIST_SECTION);
    const ps = this.arch.abi.pointerSize;
    if (sec && sec.data.length) {
      const dv = new DataView(sec.data.buffer, sec.data.byteOffset, sec.data.byteLength);
      for (let off = 0; off + ps <= dv.byteLength; off += ps) {
        const addr = ps === 8 ? dv.getBigUint64(off, true) : BigInt(dv.getUint32(off, true));
        const r = this.image.symbols.resolve(addr);
        if (r && r.offset === 0n) out.push({ start: addr, end: addr + (r.sym.size > 0n ? r.sym.size : 1n), name: r.sym.name });
        else out.push({ start: addr, end: addr + 1n, name: hex(addr) });
      }
    }
    out.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.blacklistRanges = out;
    return out;
  }

  requestStop(cpu: number, reason: StopRequest): void {
    if (!this.stopRequest) this.stopRequest = { cpu, request: reason };
  }

  // ---- tasks ----------------------------------------------------------------

  /** A new kernel stack [base, top) in the stack area, followed by an unmapped guard gap. */
  private allocStack(comm: string): { region: Region; base: bigint; top: bigint } {
    const size = this.layout.stackSize;
    const base = this.layout.stackArea + BigInt(this.nextStackSlot++ * size * 2);
    const region = this.mem.map(mustVAddr(base), size, PERM_R | PERM_W, `stack:${comm}`);
    return { region, base, top: base + BigInt(size) };
  }

  /** Create a kernel thread entering fn(arg) on `cpu`, returning to the thread-return page. */
  createKernelThread(fn: bigint, arg: bigint, cpu: number, comm: string, pid?: number): KTask {
    const stack = this.allocStack(comm);
    const t = new KTask(pid ?? this.nextPid++, comm, cpu, false, this.mem, stack.base, stack.top, stack.region);
    const s = this.scratch;
    s.mem = this.mem;
    s.userMode = false;
    this.arch.initThread(s, fn, stack.top, arg, this.threadReturnAddress());
    // Linux's kernel threads run with interrupts enabled (ret_from_fork), as their trap frames show (x86 flags 0x246 ...)
    const irqsOn = IRQ_ENABLE_BIT[this.arch.name];
    if (irqsOn !== undefined) s.setReg(this.arch.abi.flagsReg, s.getReg(this.arch.abi.flagsReg) | irqsOn);
    t.ctx = s.saveContext();
    t.userMode = false;
    this.allTasks.push(t);
    this.sched.enqueue(t);
    return t;
  }

  /** Create a task from a prepared register file (user processes). */
  createTaskFromContext(comm: string, cpu: number, user: boolean, mm: Memory, init: (scratch: Cpu) => void,
    stack: { base: bigint; top: bigint }, pid?: number): KTask {
    const t = new KTask(pid ?? this.nextPid++, comm, cpu, user, mm, stack.base, stack.top, null);
    const s = this.scratch;
    s.mem = mm;
    s.userMode = user;
    init(s);
    t.ctx = s.saveContext();
    t.userMode = user;
    s.mem = this.mem;
    s.userMode = false;
    this.allTasks.push(t);
    this.sched.enqueue(t);
    return t;
  }

  threadReturnAddress(): bigint { return fromVAddr(this.returnPage); }

  /** Change a task's saved registers (a task not on a CPU) through the scratch CPU. */
  editContext(t: KTask, edit: (cpu: Cpu) => void): void {
    if (!t.ctx) throw new Error(`task ${t.pid} has no saved registers`);
    const s = this.scratch;
    s.mem = t.mm;
    s.userMode = t.userMode;
    s.restoreContext(t.ctx);
    edit(s);
    t.ctx = s.saveContext();
    s.mem = this.mem;
    s.userMode = false;
  }

  /** Boot: start_kernel (e_entry) as task 1 on CPU 0. */
  startKernel(): KTask {
    return this.createKernelThread(this.image.entry, 0n, 0, INIT_COMM, INIT_PID);
  }

  /** thread_create hypercall */
  createThreadFromImage(caller: Cpu, fn: bigint, arg: bigint, cpu: number, commPtr: bigint): HypercallResult {
    if (!Number.isInteger(cpu) || cpu < 0 || cpu >= this.cpus.length) return BigInt(-Errno.EINVAL);
    if (toVAddr(fn) === null) return BigInt(-Errno.EINVAL);
    let comm = DEFAULT_THREAD_COMM;
    if (commPtr !== 0n) {
      const a = toVAddr(commPtr);
      if (a === null) return BigInt(-Errno.EFAULT);
      try { comm = caller.mem.readCString(a, 64); } catch (e) {
        if (e instanceof MemoryFault) return BigInt(-Errno.EFAULT);
        throw e;
      }
    }
    return BigInt(this.createKernelThread(fn, arg, cpu, comm).pid);
  }

  /** thread_join hypercall: the exit code, or NO_RESULT after blocking the caller */
  joinThread(cpu: number, pid: number): HypercallResult {
    const cur = this.currentTask(cpu);
    const target = this.taskByPid(pid);
    if (!cur) return BigInt(-Errno.EINVAL);
    if (!target) return BigInt(-Errno.ESRCH);
    if (target === cur) return BigInt(-Errno.EDEADLK);
    if (target.state === 'exited') return BigInt(target.exitCode ?? 0);
    cur.state = 'blocked';
    target.joiners.push(cur);
    this.sched.deschedule(cpu);
    return NO_RESULT;
  }

  /** End the task running on `cpu` and give the CPU to the next one. */
  exitCurrent(cpu: number, code: number): void {
    const t = this.currentTask(cpu);
    if (!t) return;
    this.exitTask(t, code);
    this.sched.deschedule(cpu);
  }

  /** End a task wherever it is: running on its CPU, queued, or blocked. */
  endTask(t: KTask, code: number): void {
    if (t.state === 'exited') return;
    const q = this.sched.rq[t.cpu];
    if (q.current === t) { this.exitCurrent(t.cpu, code); return; }
    const i = q.queue.indexOf(t);
    if (i >= 0) q.queue.splice(i, 1);
    this.exitTask(t, code);
  }

  private exitTask(t: KTask, code: number): void {
    t.state = 'exited';
    t.exitCode = code;
    t.ctx = null;
    for (const j of t.joiners.splice(0)) this.sched.wake(j, { reg: this.arch.abi.hypercall.ret, value: BigInt(code) });
    for (const l of this.exitListeners) l(t);
    if (t.pid === INIT_PID) this.powerOff(code);
  }

  powerOff(code: number): void {
    if (this.exitCode !== null) return;
    this.exitCode = code;
    this.log.flush(this.clock.now());
    this.userInit?.poweringOff();
  }

  warn(cpu: number, text: string): void { this.printk(cpu, text, 'emulator'); }

  // ---- probe hits (emulator/trace) --------------------------------------------

  /** Send the hits to `log` (and the probe handlers' printk lines, as their hits' output). */
  attachHitLog(log: ProbeHitSink): void {
    this.hitLog = log;
    this.log.onRecord(r => { if (r.source === 'probe') log.output(r.cpu, r.text); });
  }

  /**
   * One probe hit (its handlers are about to run) on `cpu`: numbered
   * (hitSeq; returned) and recorded in the hit log. Every engine's hit
   * path calls this once per hit; a missed hit calls probeMissed instead.
   * `probe`: the probe's display name (cached per probe by the caller).
   */
  probeHit(kind: HitKind, cpu: number, probeId: number, addr: bigint, probe: string, latencyNs?: number): number {
    const seq = ++this.hitSeq;
    if (this.hitStopAt > 0 && seq >= this.hitStopAt) this.requestStop(cpu, { reason: 'goto', description: 'time travel' });
    const log = this.hitLog;
    if (log !== null) {
      if (seq > log.lastSeq) {
        const t = this.sched.rq[cpu]?.current;
        log.hit(seq, this.instructionsRetired() + this.runRetired, this.clock.nowNs(cpu), cpu, t === undefined ? 0 : t.pid, t === undefined ? this.idleComm(cpu) : t.comm,
          kind, probeId, probe, addr, latencyNs === undefined ? NaN : latencyNs);
      } else log.replayed(cpu);
    }
    return seq;
  }

  /** the comm of CPU n's idle context (swapper/n), made once */
  private idleComm(cpu: number): string {
    return this.idleComms[cpu] ??= `swapper/${cpu}`;
  }
  private readonly idleComms: string[] = [];

  /**
   * A task off its CPU: the kernel stack pointer its saved registers resume
   * with (kretprobes' missed-call accounting); null when no kernel call of
   * it is in flight (it resumes in user mode, or has exited).
   */
  savedKernelSp(t: Task): bigint | null {
    const k = t as KTask;
    if (k.state === 'exited' || !k.ctx) return null;
    if (k.userMode) return null;
    const s = this.scratch; // read through the scratch CPU; the task's saved registers stay as they are
    s.mem = k.mm;
    s.restoreContext(k.ctx);
    const sp = s.getReg(this.arch.abi.spReg);
    s.mem = this.mem;
    return sp;
  }

  /** A missed probe hit (nmissed counted, no handler ran): numbered (missSeq) and reported to the hit log's warnings. */
  probeMissed(info: MissInfo): void {
    const seq = ++this.missSeq;
    this.hitLog?.missed(seq, info);
  }

  // ---- traps ----------------------------------------------------------------

  /** tasks asleep until a virtual time (ns), earliest first */
  private readonly timers: { at: number; task: KTask; value: bigint }[] = [];

  /** Put the task running on `cpu` to sleep until virtual time `at`; it then runs with `value` in its return register. */
  sleepUntil(cpu: number, at: number, value: bigint): void {
    const t = this.currentTask(cpu);
    if (!t) return;
    t.state = 'blocked';
    const k = this.timers.findIndex(x => x.at > at);
    this.timers.splice(k < 0 ? this.timers.length : k, 0, { at, task: t, value });
    this.sched.deschedule(cpu);
  }

  /** Wake a sleeping task early (a signal): it runs with `value` (-EINTR); false when it was not asleep on a timer. */
  cancelSleep(t: KTask, value: bigint): boolean {
    const k = this.timers.findIndex(x => x.task === t);
    if (k < 0) return false;
    this.timers.splice(k, 1);
    this.sched.wake(t, { reg: this.arch.abi.syscall.ret, value });
    return true;
  }

  /** The earliest timer's time (ns), if any task sleeps. */
  nextTimer(): number | undefined { return this.timers[0]?.at; }

  /** Timer tick (called by the machine at tick boundaries): expired sleeps, round-robin preemption, wake halted CPUs. */
  tick(): void {
    const now = this.clock.roundStart;
    while (this.timers.length && this.timers[0].at <= now) {
      const x = this.timers.shift()!;
      if (x.task.state === 'blocked') this.sched.wake(x.task, { reg: this.arch.abi.syscall.ret, value: x.value });
    }
    for (const h of this.tickHooks) h();
    this.sched.rq.forEach((q, c) => {
      if (q.dead) return;
      if (q.haltedUntil !== 0 && q.haltedUntil <= now) q.haltedUntil = 0;
      if (q.current && q.queue.length > 0 && !this.preemptBlockers.some(b => b(c))) this.sched.schedule(c);
    });
  }

  private isThreadReturn(trap: Trap): boolean {
    if (trap.kind !== 'pageFault' || trap.access !== 'exec') return false;
    const a = toVAddr(trap.addr);
    return a !== null && a >= this.returnPage && a < this.returnPage + PAGE_SIZE;
  }

  /** Dispatch a trap raised by `cpu`: thread return, hooks, the kernel's own handling, else oops. */
  handleTrap(cpu: Cpu, trap: Trap): void {
    const task = this.currentTask(cpu.id);
    if (task && !task.user && this.isThreadReturn(trap)) {
      task.returnValue = cpu.getReg(this.arch.abi.retReg); // the thread function's return value (a module's init)
      this.exitCurrent(cpu.id, 0);
      return;
    }
    for (const h of this.hooks) {
      let consumed: boolean;
      try { consumed = h(cpu, trap); } catch (e) {
        this.oops(cpu, trap, `kprobe-debug: trap hook failed: ${e instanceof Error ? e.message : String(e)}`);
        return;
      }
      if (consumed) return;
    }
    if (cpu.userMode && task) {
      if (this.userTrapHandler) this.userTrapHandler(this, cpu, task, trap);
      else this.oops(cpu, trap, 'user-mode trap with no process support');
      return;
    }
    switch (trap.kind) {
      case 'hypercall': this.hypercall(cpu); return;
      case 'halt': {
        const q = this.sched.rq[cpu.id];
        q.haltedUntil = (Math.floor(this.clock.nowNs(cpu.id) / TICK_NS) + 1) * TICK_NS;
        return;
      }
      case 'singleStep': return; // an unclaimed debug trap is ignored, as Linux's do_debug does
      case 'pageFault':
      case 'generalProtection':
        if (this.fixupException(cpu)) return;
        this.oops(cpu, trap, '');
        return;
      default:
        this.oops(cpu, trap, '');
    }
  }

  /** __ex_table: resume at the fixup of a faulting instruction listed there. */
  private fixupException(cpu: Cpu): boolean {
    if (!this.exTable) {
      this.exTable = new Map();
      const sec = this.image.section(EXCEPTION_TABLE_SECTION);
      if (sec) {
        const dv = new DataView(sec.data.buffer, sec.data.byteOffset, sec.data.byteLength);
        for (let off = 0; off + 16 <= dv.byteLength; off += 16) {
          const insn = toVAddr(dv.getBigUint64(off, true));
          if (insn !== null) this.exTable.set(insn, dv.getBigUint64(off + 8, true));
        }
      }
    }
    const pc = toVAddr(cpu.getPc());
    const fix = pc === null ? undefined : this.exTable.get(pc);
    if (fix === undefined) return false;
    cpu.setPc(fix);
    return true;
  }

  private hypercall(cpu: Cpu): void {
    const abi = this.arch.abi.hypercall;
    const nr = Number(BigInt.asIntN(64, cpu.getReg(abi.nr)));
    const h = HYPERCALLS.get(nr);
    if (!h) {
      if (!this.warnedHypercalls.has(nr)) {
        this.warnedHypercalls.add(nr);
        this.warn(cpu.id, `kprobe-debug: unknown hypercall ${nr} at ${this.image.symbols.format(cpu.getPc())}: returning -ENOSYS`);
      }
      cpu.setReg(abi.ret, BigInt(-Errno.ENOSYS));
      return;
    }
    const r = h(this, cpu, abi.args.map(i => cpu.getReg(i)));
    if (r !== NO_RESULT) cpu.setReg(abi.ret, r);
  }
}
