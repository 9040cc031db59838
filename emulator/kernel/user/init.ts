/**
 * Starting user space from a kernel image (so that a kernel under the
 * debugger or kprobe-run can run user programs): the user_init hypercall
 * (examples/include/kprobe_image.h kp_user_init) runs the machine's programs
 * (`kprobe-run run --exec "/bin/prog args"`, the launch attribute `exec`) as
 * Linux's kernel_init runs init: each a user process from the machine's
 * filesystem, with init's environment (HOME=/, TERM=linux), its standard
 * streams on the console. With `wait` the calling kernel thread sleeps until
 * they have all ended and gets the first one's exit status; a call with
 * `wait` after a call without it waits for the programs that call started. A
 * kernel that powers off without ever making the call while it was given
 * programs says so in the kernel log (source 'emulator': the CLI's stderr,
 * the Debug Console): they never ran.
 *
 * The state lives in a UserInit object reachable from the kernel, never in
 * closure variables, so that time travel puts it back with the machine.
 */
import type { Cpu } from '../../arch/types';
import { parseElf } from '../../elf/elfFile';
import { Errno } from '../abi';
import { HypercallResult, NO_RESULT } from '../hypercalls';
import type { Kernel } from '../kernel';
import type { KTask } from '../task';
import type { Task } from '../types';
import { UserIo, pickCpu, spawnUserProgram } from './process';
import { KernelService, USER_SERVE, USER_WILL_SERVE, UserRequestOp } from './kernelService';
import { imageWork } from './imageWork';

/** Linux's envp_init */
const INIT_ENV = ['HOME=/', 'TERM=linux'];

/** Split a command line as a shell would for simple words: spaces, '...' and "..." quoting, backslash escapes. */
export function splitCommand(cmd: string): string[] {
  const out: string[] = [];
  let cur = '', inWord = false, quote: string | null = null;
  for (let i = 0; i < cmd.length; i++) {
    const ch = cmd[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < cmd.length) cur += cmd[++i];
      else cur += ch;
    } else if (ch === '"' || ch === "'") { quote = ch; inWord = true; }
    else if (ch === '\\' && i + 1 < cmd.length) { cur += cmd[++i]; inWord = true; }
    else if (/\s/.test(ch)) { if (inWord) { out.push(cur); cur = ''; inWord = false; } }
    else { cur += ch; inWord = true; }
  }
  if (quote) throw new Error(`unterminated ${quote} in "${cmd}"`);
  if (inWord) out.push(cur);
  return out;
}

/** The user_init hypercall's state and behaviour (Kernel.userInit). */
export class UserInit {
  /** the call has started the programs */
  started = false;
  /** a call with `wait` has been answered (or is waiting) */
  waited = false;
  /** pids of the started programs still running */
  readonly pending = new Set<number>();
  first: number | null = null;
  firstCode = 0;
  /** the kernel thread waiting for them */
  waiter: KTask | null = null;

  /** the image's thread doing the kernel's part of what user space does (kernelService.ts) */
  readonly service: KernelService;

  constructor(private readonly k: Kernel, readonly commands: readonly string[]) {
    this.service = new KernelService(k, () => this.started && this.pending.size === 0);
  }

  /** A task ended: a user process's end is do_exit's work; one program fewer to wait for. */
  taskExited(t: Task): void {
    const proc = this.k.processes.get(t.pid);
    if (proc) this.service.post({ op: UserRequestOp.Exit, args: [BigInt(proc.waitStatus ?? 0)] });
    if (!this.pending.delete(t.pid)) return;
    if (this.pending.size === 0) this.service.userSpaceEnded();
    if (t.pid === this.first) this.firstCode = t.exitCode ?? 0;
    if (this.pending.size === 0 && this.waiter) {
      const w = this.waiter;
      this.waiter = null;
      this.k.sched.wake(w, { reg: this.k.arch.abi.hypercall.ret, value: BigInt(this.firstCode) });
    }
  }

  /**
   * The hypercall: start the programs (first call), and with `wait` wait for them; its serve form
   * (first argument USER_SERVE, read from the register: the table passes `wait` as a flag) hands the
   * image's thread the next request of user space (kernelService.ts).
   */
  call(cpu: Cpu, wait: boolean): HypercallResult {
    const abi = this.k.arch.abi.hypercall;
    const form = cpu.getReg(abi.args[0]);
    if (form === USER_SERVE) return this.service.serve(cpu, cpu.getReg(abi.args[1]));
    if (form === USER_WILL_SERVE) { this.service.served = true; return BigInt(this.commands.length); }
    const work = imageWork(this.k, this.service, cpu, form, cpu.getReg(abi.args[1]), cpu.getReg(abi.args[2]), cpu.getReg(abi.args[3]));
    if (work !== undefined) return work;
    if (this.started) {
      if (!wait || this.waited) return BigInt(-Errno.EBUSY);
      return this.wait(cpu);
    }
    this.started = true;
    const r = this.start(cpu);
    // nothing started: the threads waiting to serve user space hear that it has ended
    if (this.pending.size === 0) this.service.userSpaceEnded();
    if (r !== null) return r;
    if (!wait) return BigInt(this.commands.length ? this.pending.size : 0);
    return this.wait(cpu);
  }

  /** The machine powers off: programs it was given and never started are named. */
  poweringOff(): void {
    if (this.started || !this.commands.length) return;
    const given = this.commands.map(c => JSON.stringify(c)).join(', ');
    this.k.warn(-1, `kprobe-debug: the kernel powered off without starting user space: ${given} never ran `
      + '(the image never called kp_user_init, examples/include/kprobe_image.h)');
  }

  /** Start every program; null when all started, else the hypercall's -errno. */
  private start(cpu: Cpu): HypercallResult | null {
    const k = this.k;
    const io: UserIo = {
      stdout: b => k.log.consoleBytes(cpu.id, b, k.clock.now(cpu.id)),
      stderr: b => k.log.consoleBytes(cpu.id, b, k.clock.now(cpu.id)),
      console: true,
    };
    for (const cmd of this.commands) {
      let argv: string[];
      try { argv = splitCommand(cmd); } catch (e) {
        k.warn(cpu.id, `user_init: ${e instanceof Error ? e.message : String(e)}`);
        return BigInt(-Errno.EINVAL);
      }
      if (!argv.length) continue;
      const path = argv[0];
      const r = k.fs.lookup(path, k.fs.root);
      if (!r.ok || !r.inode.isReg) {
        k.warn(cpu.id, `user_init: ${path}: ${r.ok ? 'not a regular file' : 'no such file in the machine\'s filesystem (give it with --rootfs / --initramfs)'}`);
        return BigInt(-(r.ok ? Errno.EACCES : Errno.ENOENT));
      }
      let pid: number;
      try {
        const image = parseElf(r.inode.data().slice(), path);
        pid = spawnUserProgram(k, image, { argv, env: INIT_ENV, io, exe: r.inode, execPath: path, file: r.inode.pages(), cpu: pickCpu(k) }).task.pid;
      } catch (e) {
        k.warn(cpu.id, `user_init: ${path}: ${e instanceof Error ? e.message : String(e)}`);
        return BigInt(-Errno.ENOEXEC);
      }
      this.pending.add(pid);
      this.first ??= pid;
    }
    return null;
  }

  /** The calling kernel thread sleeps until every started program has ended (at once when none runs). */
  private wait(cpu: Cpu): HypercallResult {
    this.waited = true;
    if (this.pending.size === 0) return BigInt(this.firstCode);
    const me = this.k.currentTask(cpu.id);
    if (!me) return BigInt(-Errno.EINVAL);
    this.waiter = me;
    me.state = 'blocked';
    this.k.sched.deschedule(cpu.id);
    return NO_RESULT;
  }
}

export function installUserInit(k: Kernel, commands: readonly string[]): void {
  const u = new UserInit(k, commands);
  k.onTaskExit(t => u.taskExited(t));
  k.userInit = u;
}
