/**
 * What a system call handler gets and gives (shared by the syscall groups):
 * the process, CPU and task it runs for; a value for the return register,
 * NO_RESULT when the task no longer runs this call (exit, a context switch
 * done by the call), or RESTART after it put the task to sleep on something
 * (a pipe, a child): the call runs again from the start when the task is
 * woken, as Linux restarts a call interrupted with -ERESTARTSYS.
 */
import type { Cpu } from '../../arch/types';
import { Errno } from '../abi';
import { NO_RESULT } from '../hypercalls';
import type { KTask } from '../task';
import type { UserProcess } from './process';

export const RESTART = Symbol('restart');
export type SyscallResult = bigint | typeof NO_RESULT | typeof RESTART;
export interface SyscallCtx { proc: UserProcess; cpu: Cpu; task: KTask }
export type SyscallHandler = (c: SyscallCtx, a: readonly bigint[]) => SyscallResult;

export const E = (name: keyof typeof Errno): bigint => BigInt(-Errno[name]);
export const neg = (errno: number): bigint => BigInt(-errno);
export const int = (v: bigint): number => Number(BigInt.asIntN(64, v));
/** a 32-bit int argument (fds, flags, modes) as the kernel reads it */
export const i32 = (v: bigint): number => Number(BigInt.asIntN(32, v));
export { NO_RESULT };
