/**
 * The Machine: CPUs + emulated kernel + the deterministic run loop, and the
 * subsystems it owns: the kprobes engine (created at boot, as Linux's
 * init_kprobes, where the architecture has kprobes; it registers its
 * sysctls in the kernel's table), the uprobes engine and the debug
 * registers. The probe manager (.kprobe files and debugger breakpoints on
 * top of the engines) is composed above it (probes/attach.ts probesOf) and
 * attached to its probe-layer slot, where the kernel's tracefs finds it.
 * Every front end (CLI, DAP adapter, tests) drives this object; it knows
 * nothing of DAP or VS Code (vscode-mock-debug's mockRuntime idea).
 *
 * Interleaving: the machine runs in rounds; in each round CPU 0, 1, ... N-1
 * in turn run up to `quantum` instructions of their current task (an idle or
 * halted CPU spends its turn doing nothing). Trap handling happens inside
 * the CPU's turn. Time is 1 ns per instruction slot (see kernel/clock.ts);
 * the 1 ms timer tick preempts round-robin at round boundaries. Runs are
 * deterministic: same image + options (+ same debugger actions) -> same
 * instruction interleaving and the same console transcript, whatever slice
 * budgets the caller uses.
 */
import { FrontEnd, TranslateMode, defaultTranslateMode, translatorFor } from './jit';
import { ArchOps, Cpu } from './arch/types';
import { archForElfMachine, hwDebugArchFor, kprobesArchFor, moduleRelocsFor, uprobesArchFor } from './arch/registry';
import { HwBreakpoints, Kwatches } from './hwbp';
import { ModuleTable, setModuleTableFactory } from './kernel/modules/modules';
import { UprobesEngine } from './uprobes/core';
import { KprobesEngine } from './kprobes/core';
import { fixupStackTrace, formatKprobeList, readKprobesEnabled, symbolizeEngineAddress, writeKprobesEnabled } from './kprobes';
import type { KprobesEngineOptions } from './kprobes/engineTypes';
import type { ProbeManagerOptions } from './probes/types';
import { mountKernelFilesystems } from './kernel/fs/kernelMounts';
import type { KprobesDebugSource } from './kernel/fs/debugfs';
import { EventProbeSource, makeTracefs } from './tracing/tracefs';
import { MachineOptionError, kernelCmdlineError, machineOption } from './machineOptions';
import { ElfImage, ImageError } from './elf/types';
import { TICK_NS } from './kernel/clock';
import { Kernel } from './kernel/kernel';
import { PrintkListener, setKernelCmdline } from './kernel/printk';
import { KTask } from './kernel/task';
import { PrintkRecord, StopRequest, UnwindHooks } from './kernel/types';
import { UserIo, UserProgramOptions, spawnUserProgram } from './kernel/user/process';
import { populateVfs } from './kernel/fs/populate';
import { S_IFREG } from './kernel/fs/vfs';
import { installUserInit } from './kernel/user/init';
import { INIT_PID } from './kernel/kernel';
import { HitLog } from './trace/hitLog';
import { statSync } from 'node:fs';
import { isAbsolute, resolve as resolvePath } from 'node:path';
import { immutableState } from './base/marks';

export interface MachineOptions {
  /** emulated CPUs (default 2; 1..64) */
  cpus?: number;
  /** stop after this many instructions in total (0 = unlimited, the default) */
  maxInstructions?: number;
  /** instruction slots per CPU per round (default 10000) */
  quantum?: number;
  /** CPU table to use instead of looking the image's e_machine up in the registry (tests) */
  arch?: ArchOps;
  /**
   * the kprobes engine's options (boosters, optimization at boot, hooks);
   * false: boot without an engine (a test that builds its own). Default: an
   * engine with Linux's defaults wherever the architecture has kprobes.
   */
  kprobes?: KprobesEngineOptions | false;
  /** the options the probe manager is built with (handler step budget...; probes/attach.ts probesOf) */
  probes?: ProbeManagerOptions;
  /** what the emulated filesystem holds at boot: a host directory's tree (read lazily, never written) and initramfs archives */
  rootfs?: string;
  initramfs?: readonly string[];
  /** user programs a kernel image starts with the user_init hypercall ("/bin/prog args", from the machine's filesystem) */
  exec?: readonly string[];
  /**
   * the block translator: 'on' (default), 'off' (the interpreter alone,
   * kprobe-run --no-translate) or 'lockstep' (checked against the
   * interpreter at every exit); true/false for on/off
   */
  translate?: TranslateMode | boolean;
  /** seed of the user processes' randomness (getrandom, AT_RANDOM); default 0, the same bytes on every run */
  randomSeed?: bigint;
  /** probe hits the hit log keeps (Machine.hitLog; default 65536, emulator/machineOptions.ts) */
  hitLogSize?: number;
  /**
   * the kernel command line, as a boot loader passes it (e.g.
   * "no_hash_pointers": printk's %p prints raw addresses); default empty.
   * One line, at most the arch's COMMAND_LINE_SIZE - 1 bytes
   */
  cmdline?: string;
}

export type ExitReason =
  /** the image powered off (or task 1 ended): code is its exit code */
  | 'poweroff'
  /** nothing can run any more (every task blocked or on a CPU stopped by an oops): code 1 */
  | 'halted'
  /** maxInstructions reached */
  | 'limit';

export interface MachineExit {
  reason: ExitReason;
  code: number;
  /** human-readable detail for 'halted' / 'limit' */
  detail: string;
  instructions: number;
}

export type SliceResult =
  /** budget used up; call runSlice again */
  | { kind: 'running' }
  /** a trap hook (kprobes engine, debugger) asked to stop; cpu = the CPU that hit it */
  | { kind: 'stopped'; cpu: number; request: StopRequest }
  /** the machine ended (power off, or nothing can run) */
  | { kind: 'exited'; code: number; reason: 'poweroff' | 'halted'; detail: string }
  /** maxInstructions reached */
  | { kind: 'limit'; instructions: number };

/**
 * The calls that move the machine forward as a recorder attached to it
 * takes them (timetravel/recorder.ts): it records each call and makes it
 * (Machine.advanceSlice / advanceStep) or replays its recording.
 */
export interface RunRecorder {
  runSlice(budget: number): SliceResult;
  stepCpu(cpu: number, count: number): SliceResult;
}

/** exit code of the `halted` outcome */
export const HALTED_EXIT_CODE = 1;

/**
 * The program of a user-program machine as a file of its filesystem: the
 * tree's file at its path when the tree has it (a rootfs holding it), else
 * an inode of the host file (read lazily) in no directory, so that
 * /proc/self/exe, execve of itself and its text's (inode, offset) identity
 * are real.
 */
function withProgramFile(k: Kernel, image: ElfImage, user: UserProgramOptions): UserProgramOptions {
  const path = user.execPath ?? image.path;
  const abs = isAbsolute(path) ? path : resolvePath(path);
  const r = k.fs.lookup(abs, k.fs.root);
  if (r.ok && r.inode.isReg) return { ...user, exe: r.inode, execPath: path, file: r.inode.pages() };
  // not in the tree: an inode of its own, linked in no directory (the tree stays as given)
  let size = 0;
  try { size = statSync(image.path).size; } catch { return user; }
  const inode = k.fs.newInode(S_IFREG | 0o755);
  inode.hostPath = image.path;
  inode.size = size;
  return { ...user, exe: inode, execPath: path, file: inode.pages() };
}

/**
 * What the kernel's stack walks (kernel/stack.ts) ask of the kprobes
 * engine: the bytes under its breakpoints, its trampoline, the real return
 * addresses of live kretprobe instances, the names of its code.
 */
function kprobesUnwindHooks(k: Kernel, engine: KprobesEngine): UnwindHooks {
  return {
    readCode: (addr, len) => engine.arming.readTextWithoutProbes(k.mem, addr, len),
    kretprobeTrampoline: () => engine.kretprobes.trampoline,
    fixupStackTrace: (task, addrs, cpu) => fixupStackTrace(engine, task, addrs, cpu),
    symbolize: addr => symbolizeEngineAddress(engine, addr),
  };
}

/** /sys/kernel/debug/kprobes/{list,enabled,blacklist} over the kprobes engine (or none). */
function kprobesDebugSource(engine: KprobesEngine | null): KprobesDebugSource {
  return {
    hasKprobes: engine !== null,
    debugfsList: () => (engine ? formatKprobeList(engine) : ''),
    get kprobesEnabled() { return engine ? readKprobesEnabled(engine) === '1\n' : false; },
    writeKprobesEnabled: text => {
      if (!engine) throw new Error('kprobes: this machine has no kprobes engine (a user-program machine): only uprobes can be placed');
      return writeKprobesEnabled(engine, text);
    },
  };
}

/** Resolve the CPU table of an image (clear error when there is none). */
export function archForImage(image: ElfImage): ArchOps {
  const arch = archForElfMachine(image.machine);
  if (!arch) throw new ImageError(image.path, `unsupported machine ${image.archName}: no CPU emulator for this architecture yet`);
  return arch;
}

export class Machine {
  readonly kernel: Kernel;
  private readonly engine: KprobesEngine | null;
  private readonly uprobesEngine: UprobesEngine | null;
  /** hardware breakpoints and watchpoints: the debug-register allocator shared by kwatch and the debugger */
  readonly hwbp: HwBreakpoints;
  private kwatchTable?: Kwatches;
  private moduleTable: ModuleTable | null = null;
  private hasKernelImage = true;
  private readonly moduleListeners: (() => void)[] = [];
  /** the module list changed (loaded, live, going, unloaded) */
  onModulesChange(l: () => void): void { this.moduleListeners.push(l); }
  private probeLayer: EventProbeSource | null = null;
  /** the options the probe manager is built with (MachineOptions.probes; probes/attach.ts) */
  readonly probeOptions: ProbeManagerOptions;
  readonly arch: ArchOps;
  readonly cpus: readonly Cpu[];
  readonly maxInstructions: number;
  readonly quantum: number;
  /** instructions retired on all CPUs */
  totalInstructions = 0;
  /** instructions retired by each CPU (its instruction stream only: not the charged handler slots) */
  readonly retired: number[];
  /** what is left of the budget of the slice / the count of the step that returned last (time travel resumes a run it stopped inside) */
  sliceLeft = 0;
  stepLeft = 0;
  /** time travel: stop once this CPU has retired this many instructions (set only while re-executing) */
  travelStop: { cpu: number; retired: number } | null = null;
  private travel: RunRecorder | null = null;
  private cursor = 0;
  private ranThisRound = false;
  private final: MachineExit | null = null;
  private regScratch: Cpu | null = null;

  /** Boot a kernel image: start_kernel on CPU 0 as task 1. */
  constructor(readonly image: ElfImage, opts: MachineOptions = {}, user?: UserProgramOptions) {
    this.arch = immutableState(opts.arch ?? archForImage(image));
    immutableState(image); // the ELF, its symbols and DWARF: never part of a time-travel snapshot
    this.quantum = machineOption('quantum', opts.quantum);
    this.maxInstructions = machineOption('maxInstructions', opts.maxInstructions);
    const translate = opts.translate === true ? 'on' : opts.translate === false ? 'off' : opts.translate;
    this.kernel = new Kernel(this.arch, image, {
      cpus: machineOption('cpus', opts.cpus), quantum: this.quantum,
      translator: translatorFor(this.arch.name, this.arch.jit as FrontEnd<unknown, never> | undefined, translate ?? defaultTranslateMode()),
    }, !user);
    this.cpus = this.kernel.cpus;
    this.kernel.attachHitLog(this.hits = new HitLog(machineOption('hitLogSize', opts.hitLogSize)));
    this.kernel.instructionsRetired = () => this.totalInstructions;
    this.retired = this.cpus.map(() => 0);
    // the port's kprobes hooks are handed to the engine (kprobes/ does not look in the registry)
    const kprobeHooks = opts.kprobes === false || user ? undefined : opts.kprobes?.hooks ?? kprobesArchFor(this.arch.name);
    this.engine = kprobeHooks ? new KprobesEngine(this.kernel, { ...(opts.kprobes || {}), hooks: kprobeHooks }) : null;
    if (this.engine) this.kernel.unwindHooks = kprobesUnwindHooks(this.kernel, this.engine);
    const up = uprobesArchFor(this.arch.name);
    this.uprobesEngine = up ? new UprobesEngine(this.kernel, up) : null;
    this.hwbp = new HwBreakpoints(this.kernel, hwDebugArchFor(this.arch.name));
    // register_kwatch from a module's C code
    if (this.engine && !user) this.engine.cApi.kwatch = () => this.kwatch;
    this.probeOptions = opts.probes ?? {};
    this.kernel.randomSeed = BigInt.asUintN(64, opts.randomSeed ?? 0n);
    if (opts.cmdline !== undefined) {
      const err = kernelCmdlineError(this.arch.name, opts.cmdline);
      if (err) throw new MachineOptionError(err);
      setKernelCmdline(this.kernel, opts.cmdline);
    }
    populateVfs(this.kernel.fs, opts);
    const debug = kprobesDebugSource(this.engine);
    const events = (): EventProbeSource | null => (this.engine || this.uprobesEngine ? this.probeLayer : null);
    mountKernelFilesystems(this.kernel, () => (this.engine || this.uprobesEngine ? debug : null),
      () => makeTracefs(this.kernel, events, () => this.engine?.ftrace ?? null), () => this.loadedModules() ?? []);
    this.hasKernelImage = !user;
    // init_module / finit_module from user space make the table as insmod does
    if (!user && moduleRelocsFor(this.arch.name)) setModuleTableFactory(this.kernel, () => this.modules);
    if (user) spawnUserProgram(this.kernel, image, user.exe ? user : withProgramFile(this.kernel, image, user), INIT_PID);
    else {
      installUserInit(this.kernel, opts.exec ?? []);
      this.kernel.startKernel();
    }
  }

  /** A machine running one static Linux user program as task 1 (exit status = machine exit code). */
  static forUserProgram(image: ElfImage, argv: readonly string[], io: UserIo,
    opts: MachineOptions & { env?: readonly string[]; execPath?: string; cwd?: string } = {}): Machine {
    return new Machine(image, { cpus: 1, ...opts }, { argv, env: opts.env, io, execPath: opts.execPath, cwd: opts.cwd });
  }

  /**
   * The recorder attached to this machine (timetravel/recorder.ts
   * recordMachine), null when not recording: runSlice / stepCpu go through it.
   */
  get recorder(): RunRecorder | null { return this.travel; }

  /** Attach a recorder (once): from now on runSlice / stepCpu go through it. @internal (timetravel/) */
  attachRecorder(r: RunRecorder): void {
    if (this.travel && this.travel !== r) throw new Error('this machine already has a recorder');
    this.travel = r;
  }

  /** The kprobes engine (started at boot); a clear error where there is none. */
  get kprobes(): KprobesEngine {
    if (!this.engine) {
      throw new Error(`kprobes: no kprobes engine on this machine (${this.kernel.processes.size ? 'a user-program machine' : `kprobes is not ported to ${this.arch.name} yet`})`);
    }
    return this.engine;
  }

  /** Kernel watchpoint probes (register_kwatch / unregister_kwatch); a clear error without a kernel image. */
  get kwatch(): Kwatches {
    if (!this.hasKernelImage) throw new Error('kwatch: a user-program machine has no kernel to watch');
    return this.kwatchTable ??= new Kwatches(this.kernel, this.hwbp);
  }

  /** The uprobes engine (kernel and user-program machines alike); a clear error where the arch has none. */
  get uprobes(): UprobesEngine {
    if (!this.uprobesEngine) throw new Error(`uprobes: not ported to ${this.arch.name}`);
    return this.uprobesEngine;
  }

  /**
   * The kernel's loadable modules (insmod / rmmod), created on first use; a
   * clear error on a user-program machine or where the arch has no module
   * relocations. Code that goes away kills the kprobes on it ([GONE]).
   */
  get modules(): ModuleTable {
    if (this.moduleTable) return this.moduleTable;
    if (!this.hasKernelImage) throw new Error('modules: a user-program machine has no kernel to load modules into');
    const relocs = moduleRelocsFor(this.arch.name);
    if (!relocs) throw new Error(`modules: loadable modules are not ported to ${this.arch.name} yet`);
    this.moduleTable = new ModuleTable(this.kernel, relocs, {
      onFree: (lo, hi, mod, why) => {
        if (!this.engine) return;
        this.engine.killKprobesIn(lo, hi);
        if (why === 'unload') this.engine.cApi.warnOrphans(lo, hi, mod.name);
      },
      kernelFunction: name => this.engine?.cApi.symbol(name),
      onChange: () => { for (const l of this.moduleListeners) l(); },
    });
    return this.moduleTable;
  }

  /** The loaded modules, or undefined when no module was ever loaded or the machine has no module support. */
  loadedModules(): readonly import('./kernel/modules/modules').KernelModule[] | undefined {
    if (this.moduleTable) return this.moduleTable.list();
    return this.hasKernelImage && moduleRelocsFor(this.arch.name) ? [] : undefined;
  }

  /** Whether this machine has a kprobes engine. */
  get hasKprobes(): boolean { return this.engine !== null; }

  /** every probe hit of every kind, numbered (kernel.hitSeq), kretprobe latency histograms, missed-hit warnings (emulator/trace) */
  get hitLog(): HitLog { return this.hits; }
  private readonly hits: HitLog;

  /** Whether this machine has a uprobes engine. */
  get hasUprobes(): boolean { return this.uprobesEngine !== null; }

  /** Whether this machine runs a kernel image (false: one user program, no kernel to probe or watch). */
  get isKernelMachine(): boolean { return this.hasKernelImage; }

  /**
   * The probe manager the layer above attached (probes/attach.ts probesOf),
   * null until then: the kernel's tracefs defines kprobe_events /
   * uprobe_events probes through it. Machine state: time travel puts it back.
   */
  get attachedProbes(): EventProbeSource | null { return this.probeLayer; }

  /** Attach the probe manager (once; probes/attach.ts). */
  attachProbes(layer: EventProbeSource): void {
    if (this.probeLayer && this.probeLayer !== layer) throw new Error('this machine already has a probe manager');
    this.probeLayer = layer;
  }

  /**
   * Work done on CPU `cpu` outside its instruction stream (probe handler
   * steps): `slots` instruction slots of its virtual time (owed time, see
   * kernel/clock.ts) and of the maxInstructions limit.
   */
  charge(cpu: number, slots: number): void {
    this.kernel.clock.charge(cpu, slots);
    this.totalInstructions += slots;
  }

  /** sysctl -w NAME=VALUE on this machine's kernel: 0, or -EINVAL with the reason. */
  writeSysctl(name: string, value: string): { errno: number; reason?: string } {
    return this.kernel.sysctl.write(name, value);
  }

  onPrintk(listener: PrintkListener): () => void { return this.kernel.onPrintk(listener); }
  /** every printk record so far (bounded history) */
  get printkRecords(): readonly PrintkRecord[] { return this.kernel.log.records; }
  /** how the run ended, once it has */
  get exit(): MachineExit | null { return this.final; }

  /** Run to the end (power off, halt or instruction limit). Stop requests are ignored (no debugger). */
  run(): MachineExit {
    for (;;) {
      const r = this.runSlice(1_000_000);
      if (r.kind === 'exited' || r.kind === 'limit') return this.final!;
      if (r.kind === 'stopped') continue;
    }
  }

  /**
   * Run at most about `budget` instructions (all CPUs together) and return.
   * Returns early on a stop request, power off, halt or the instruction limit.
   */
  runSlice(budget: number): SliceResult {
    return this.travel ? this.travel.runSlice(budget) : this.advanceSlice(budget);
  }

  /** runSlice itself, without time travel's recording or replay @internal (timetravel/) */
  advanceSlice(budget: number): SliceResult {
    const k = this.kernel;
    let left = budget;
    for (;;) {
      this.sliceLeft = left;
      if (this.final) return this.sliceExit();
      if (k.stopRequest) {
        const s = k.stopRequest;
        k.stopRequest = null;
        return { kind: 'stopped', cpu: s.cpu, request: s.request };
      }
      if (k.exitCode !== null) { this.finish('poweroff', k.exitCode, ''); continue; }
      if (this.maxInstructions && this.totalInstructions >= this.maxInstructions) {
        this.finish('limit', 0, `stopped after ${this.totalInstructions} instructions (instruction limit)`);
        continue;
      }
      if (left <= 0) return { kind: 'running' };
      if (this.cursor >= this.cpus.length) {
        this.endRound();
        continue;
      }
      const c = this.cursor;
      if (k.clock.used[c] >= this.quantum) { this.cursor++; continue; } // the round's slots went to owed time (charge)
      const n = this.turn(c, left);
      left -= Math.max(n, 1);
      if (k.clock.used[c] >= this.quantum || !this.canRun(c)) this.cursor++;
    }
  }

  /**
   * Run exactly up to `count` instructions on one CPU outside the round order
   * (debugger single-step). Its clock advances as if in its own turn.
   */
  stepCpu(cpu: number, count = 1): SliceResult {
    if (cpu < 0 || cpu >= this.cpus.length) throw new RangeError(`no CPU ${cpu}`);
    return this.travel ? this.travel.stepCpu(cpu, count) : this.advanceStep(cpu, count);
  }

  /** stepCpu itself, without time travel's recording or replay @internal (timetravel/) */
  advanceStep(cpu: number, count: number): SliceResult {
    if (this.final) return this.sliceExit();
    let left = count;
    while (left > 0 && !this.kernel.stopRequest && this.kernel.exitCode === null && this.canRun(cpu)) {
      left -= Math.max(this.turn(cpu, left), 1);
    }
    this.stepLeft = left;
    const k = this.kernel;
    if (k.stopRequest) {
      const s = k.stopRequest;
      k.stopRequest = null;
      return { kind: 'stopped', cpu: s.cpu, request: s.request };
    }
    if (k.exitCode !== null) { this.finish('poweroff', k.exitCode, ''); return this.sliceExit(); }
    return { kind: 'running' };
  }

  /**
   * Put each CPU's first queued task on it, exactly what the machine's first
   * turn on that CPU does, so a debugger stopped at the entry point shows
   * task 1 and its registers (pc = e_entry) instead of an idle CPU.
   */
  scheduleFirstTasks(): void {
    const k = this.kernel;
    this.cpus.forEach((_, c) => {
      if (!k.current(c) && k.sched.hasWork(c)) k.sched.schedule(c);
    });
  }

  /** Register values of a task (the CPU's for a running task, else its saved context), in ArchOps.regs order. */
  taskRegisters(pid: number): bigint[] | undefined {
    const t = this.kernel.taskByPid(pid);
    if (!t || t.state === 'exited') return undefined;
    const cpu = this.cpus[t.cpu];
    if (this.kernel.currentTask(t.cpu) === t) return this.arch.regs.map((_, i) => cpu.getReg(i));
    if (!t.ctx) return undefined;
    this.regScratch ??= this.arch.createCpu(-2, t.mm);
    const s = this.regScratch;
    s.mem = t.mm;
    s.restoreContext(t.ctx);
    return this.arch.regs.map((_, i) => s.getReg(i));
  }

  /** Can CPU c do anything this turn? */
  private canRun(c: number): boolean {
    const q = this.kernel.sched.rq[c];
    if (q.dead || q.haltedUntil > this.kernel.clock.nowNs(c)) return false;
    return q.current !== undefined || q.queue.length > 0;
  }

  /** One stretch of CPU c's turn: at most `max` instructions, then the trap (if any) is handled. */
  private turn(c: number, max: number): number {
    const k = this.kernel;
    const clock = k.clock;
    if (!this.canRun(c)) { clock.used[c] = Math.max(clock.used[c], this.quantum); return 0; }
    // switching a task in may end it at once (a fatal signal pending for a user process): what is current after it runs
    if (!k.sched.rq[c].current) k.sched.schedule(c);
    const task = k.sched.rq[c].current;
    if (!task) { if (!this.canRun(c)) clock.used[c] = this.quantum; return 0; }
    let slots = Math.min(this.quantum - clock.used[c], max);
    if (this.maxInstructions) slots = Math.min(slots, this.maxInstructions - this.totalInstructions);
    const ts = this.travelStop;
    if (ts !== null && ts.cpu === c) slots = Math.min(slots, ts.retired - this.retired[c]);
    if (slots <= 0) slots = 1;
    const cpu = this.cpus[c];
    clock.activeCpu = c;
    try {
      let res;
      try {
        res = cpu.run(slots);
      } catch (e) {
        k.oops(cpu, null, `kprobe-debug: internal emulator error: ${e instanceof Error ? e.message : String(e)}`);
        return 0;
      }
      this.account(c, task, res.executed);
      if (res.trap) {
        try {
          k.handleTrap(cpu, res.trap);
        } catch (e) {
          k.oops(cpu, res.trap, `kprobe-debug: internal emulator error handling ${res.trap.kind}: ${e instanceof Error ? e.message : String(e)}`);
        }
      }
      return res.executed;
    } finally {
      clock.activeCpu = -1;
    }
  }

  private account(c: number, task: KTask, n: number): void {
    this.kernel.clock.used[c] += n;
    this.totalInstructions += n;
    this.retired[c] += n;
    const ts = this.travelStop;
    if (ts !== null && ts.cpu === c && this.retired[c] >= ts.retired) this.kernel.requestStop(c, { reason: 'goto', description: 'time travel' });
    task.instructions += n;
    if (n > 0) this.ranThisRound = true;
  }

  /** Every CPU had its turn: next round, timer tick, idle fast-forward, or the end. */
  private endRound(): void {
    const k = this.kernel;
    const clock = k.clock;
    const before = Math.floor(clock.roundStart / TICK_NS);
    if (!this.ranThisRound) {
      let anyWork = false;
      let wake = Infinity;
      k.sched.rq.forEach(q => {
        if (q.dead) return;
        if (q.current || q.queue.length) {
          anyWork = true;
          if (q.haltedUntil > 0) wake = Math.min(wake, q.haltedUntil);
        }
      });
      // tasks asleep on a timer (nanosleep): the clock skips to the first expiry, whose tick wakes it
      const timer = k.nextTimer();
      if (timer !== undefined) { anyWork = true; wake = Math.min(wake, Math.ceil(timer / TICK_NS) * TICK_NS); }
      if (!anyWork) {
        const blocked = k.tasks().filter(t => t.state === 'blocked').length;
        const detail = `no runnable task left (${blocked} blocked, ${k.oopsCount} oops)`;
        this.finish('halted', HALTED_EXIT_CODE, detail);
        return;
      }
      clock.nextRound(wake === Infinity ? 0 : wake);
    } else {
      clock.nextRound();
    }
    this.ranThisRound = false;
    this.cursor = 0;
    k.endRound();
    if (Math.floor(clock.roundStart / TICK_NS) > before) k.tick();
  }

  private finish(reason: ExitReason, code: number, detail: string): void {
    if (this.final) return;
    this.kernel.log.flush(this.kernel.clock.now());
    this.final = { reason, code, detail, instructions: this.totalInstructions };
  }

  private sliceExit(): SliceResult {
    const f = this.final!;
    if (f.reason === 'limit') return { kind: 'limit', instructions: f.instructions };
    return { kind: 'exited', code: f.code, reason: f.reason, detail: f.detail };
  }
}
