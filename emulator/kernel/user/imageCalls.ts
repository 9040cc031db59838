/**
 * System calls whose work the kernel image does (kernelService.ts): the
 * calling task sleeps while the image's thread serves the call with the
 * process's address space in use, and the call returns what the image's
 * function returned. Without a thread serving user space (an image that
 * never asked) the call is served here as before: imageCall gives null.
 */
import { mmAddress, type KTask } from '../task';
import { kernelServiceOf, type ImageCall, type UserRequestOp } from './kernelService';
import { RESTART, type SyscallCtx, type SyscallResult } from './results';

/** The call a task sleeps in, kept on the task (machine state: time travel puts it back). */
const CALL = Symbol('image call');
type WithCall = { [CALL]?: ImageCall };

/** Serve a system call through the image's thread: its result, RESTART while the task sleeps, or null (nobody serves). */
export function imageCall(c: SyscallCtx, op: UserRequestOp, args: readonly bigint[]): SyscallResult | null {
  const task = c.task as KTask & WithCall;
  const pending = task[CALL];
  if (pending) {
    if (pending.result === undefined) return RESTART;
    delete task[CALL];
    return pending.result;
  }
  const service = kernelServiceOf(c.proc.kernel);
  if (!service?.served) return null;
  task[CALL] = service.postCall(task, op, args, mmAddress(task));
  return RESTART;
}
