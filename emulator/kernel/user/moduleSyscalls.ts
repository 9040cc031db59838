/**
 * init_module(2), finit_module(2) and delete_module(2) (kernel/module/
 * main.c): busybox's insmod / rmmod load and unload the project's modules
 * from user space through the same module table `--module` and the
 * debugger use. As in Linux the call returns when the module's init (or
 * exit) function has returned: the calling task sleeps meanwhile (the
 * function runs in a kernel thread) and init's negative return is the
 * call's error (busybox insmod exits with that errno as its status). The parameter string is split as parse_args splits it
 * (blanks between name=value pairs, double quotes around a value with
 * blanks). A refused load prints the kernel's line and returns its errno;
 * a machine without module support answers -ENOSYS.
 */
import type { SyscallName } from '../../arch/types';
import { Errno } from '../abi';
import { ModuleError, moduleTableFor } from '../modules/modules';
import { ImageError } from '../../elf/types';
import type { KTask } from '../task';
import { copyFromUser, readUserString } from './uaccess';
import { E, RESTART, SyscallCtx, SyscallHandler, SyscallResult, i32, neg } from './results';

/** MODULE_INIT_IGNORE_MODVERSIONS | MODULE_INIT_IGNORE_VERMAGIC: the flags finit_module knows */
const FINIT_FLAGS = 3;
/** the most bytes of a module image init_module copies (a sanity bound: Linux's is the memory it can get) */
const MAX_MODULE_BYTES = 64 * 1024 * 1024;

/** The outcome of a module call the task sleeps in, kept on the task (machine state: time travel puts it back). */
const CALL = Symbol('module call');
type WithCall = { [CALL]?: { result?: bigint } };

/** parse_args' split of "a=1 b=\"x y\"" into ["a=1", "b=x y"] */
export function splitModuleParams(text: string): string[] {
  const out: string[] = [];
  const re = /\s*((?:[^\s"]|"[^"]*")+)/g;
  for (let m; (m = re.exec(text)) !== null;) if (m[1]) out.push(m[1].replace(/"/g, ''));
  return out;
}

/** The errno in a module loader line ("... (File exists, err -17)", "NAME: init returned -12"), else `fallback`. */
function errnoOf(line: string, fallback: number): number {
  const m = /err -(\d+)\)|init returned -(\d+)/.exec(line);
  return m ? Number(m[1] ?? m[2]) : fallback;
}

/**
 * Run a module table operation that ends when a kernel thread returns: the
 * first entry starts it and sleeps; the restart after the wake-up returns
 * its outcome. `start` gets the completion callback and returns a result
 * to give at once (a refusal), or undefined when the work was started.
 */
function sleepUntilDone(c: SyscallCtx, start: (done: (err: string | null) => void) => bigint | undefined): SyscallResult {
  const task = c.task as KTask & WithCall;
  const call = task[CALL];
  if (call) {
    if (call.result === undefined) return RESTART;
    delete task[CALL];
    return call.result;
  }
  const state: { result?: bigint } = {};
  task[CALL] = state;
  const k = c.proc.kernel;
  const now = start(err => {
    state.result = err === null ? 0n : neg(errnoOf(err, Errno.EINVAL));
    k.sched.wake(task);
  });
  if (now !== undefined) { delete task[CALL]; return now; }
  if (state.result !== undefined) { delete task[CALL]; return state.result; }
  return RESTART;
}

function load(c: SyscallCtx, bytes: Uint8Array, path: string, params: string): SyscallResult {
  const k = c.proc.kernel;
  const table = moduleTableFor(k);
  if (!table) return E('ENOSYS');
  return sleepUntilDone(c, done => {
    try {
      table.load(bytes, path, splitModuleParams(params), done);
      return undefined;
    } catch (e) {
      const line = e instanceof Error ? e.message : String(e);
      // a file that is no module for this kernel: -ENOEXEC, as elf_validity_check answers
      const errno = errnoOf(line, e instanceof ImageError ? Errno.ENOEXEC : Errno.EINVAL);
      // Linux says nothing in its log when the module is already there (insmod's own message is enough),
      // and a load that printed its own reason (a bad parameter: parse_args's lines) is not logged twice
      if (errno !== Errno.EEXIST && !(e instanceof ModuleError && e.logged)) k.printk(c.cpu.id, line, 'kernel');
      return neg(errno);
    }
  });
}

function initModule(c: SyscallCtx, image: bigint, len: bigint, uargs: bigint): SyscallResult {
  if (len > BigInt(MAX_MODULE_BYTES)) return E('EFBIG');
  const params = readUserString(c.proc.mm, uargs, 4096);
  if (params === null) return E('EFAULT');
  const bytes = copyFromUser(c.proc.mm, image, Number(len));
  if (!bytes) return E('EFAULT');
  // no file: the module is named by its .modinfo (every Kbuild-made module has name=)
  return load(c, bytes.slice(), 'init_module', params);
}

function finitModule(c: SyscallCtx, fd: number, uargs: bigint, flags: number): SyscallResult {
  if (flags & ~FINIT_FLAGS) return E('EINVAL');
  const params = readUserString(c.proc.mm, uargs, 4096);
  if (params === null) return E('EFAULT');
  const e = c.proc.fds.get(fd);
  if (!e) return E('EBADF');
  const inode = e.file.inode;
  if (!inode || !e.file.readable) return E('EBADF');
  if (!inode.isReg) return E('EINVAL');
  return load(c, inode.data().slice(), 'finit_module', params);
}

function deleteModule(c: SyscallCtx, uname: bigint): SyscallResult {
  const name = readUserString(c.proc.mm, uname, 64);
  if (name === null) return E('EFAULT');
  const table = moduleTableFor(c.proc.kernel);
  if (!table) return E('ENOENT');
  return sleepUntilDone(c, done => {
    const rc = table.deleteModule(name, done);
    return rc < 0 ? BigInt(rc) : undefined;
  });
}

export const MODULE_SYSCALLS = {
  init_module: (c, [image, len, uargs]) => initModule(c, image, len, uargs),
  finit_module: (c, [fd, uargs, flags]) => finitModule(c, i32(fd), uargs, i32(flags)),
  delete_module: (c, [name]) => deleteModule(c, name),
} satisfies Partial<Record<SyscallName, SyscallHandler>>;
