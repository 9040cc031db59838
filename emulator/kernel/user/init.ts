/**
 * Starting user space from a kernel image (issue 15): the user_init
 * hypercall (examples/include/kprobe_image.h kp_user_init) runs the
 * machine's programs (`kprobe-run run --exec "/bin/prog args"`, the launch
 * attribute `exec`) as Linux's kernel_init runs init: each a user process
 * from the machine's filesystem, with init's environment (HOME=/,
 * TERM=linux), its standard streams on the console. With `wait` the
 * calling kernel thread sleeps until they have all ended and gets the first
 * one's exit status.
 */
import type { Cpu } from '../../arch/types';
import { parseElf } from '../../elf/elfFile';
import { Errno } from '../abi';
import { HypercallResult, NO_RESULT } from '../hypercalls';
import type { Kernel } from '../kernel';
import type { KTask } from '../task';
import { UserIo, pickCpu, spawnUserProgram } from './process';

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

export function installUserInit(k: Kernel, commands: readonly string[]): void {
  let started = false;
  const pending = new Set<number>();
  let first: number | null = null;
  let firstCode = 0;
  let waiter: KTask | null = null;
  k.onTaskExit(t => {
    if (!pending.delete(t.pid)) return;
    if (t.pid === first) firstCode = t.exitCode ?? 0;
    if (pending.size === 0 && waiter) {
      const w = waiter;
      waiter = null;
      k.sched.wake(w, { reg: k.arch.abi.hypercall.ret, value: BigInt(firstCode) });
    }
  });
  k.userInit = (cpu: Cpu, wait: boolean): HypercallResult => {
    if (started) return BigInt(-Errno.EBUSY);
    started = true;
    const io: UserIo = {
      stdout: b => k.log.consoleBytes(cpu.id, b, k.clock.now(cpu.id)),
      stderr: b => k.log.consoleBytes(cpu.id, b, k.clock.now(cpu.id)),
    };
    for (const cmd of commands) {
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
      pending.add(pid);
      first ??= pid;
    }
    if (!wait || pending.size === 0) return BigInt(commands.length ? pending.size : 0);
    const me = k.currentTask(cpu.id);
    if (!me) return BigInt(-Errno.EINVAL);
    waiter = me;
    me.state = 'blocked';
    k.sched.deschedule(cpu.id);
    return NO_RESULT;
  };
}
