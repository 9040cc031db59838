/**
 * The kernel image's part of what user space does. User processes' system
 * calls are served here, below the image; what Linux does in kernel
 * functions on their behalf is queued for a kernel thread of the image
 * (examples/kernel/usersvc.c), which calls the functions of Linux's names
 * with the same arguments: kernel_clone for a fork / vfork / clone (its
 * clone flags | exit signal, its new stack), do_exit for a process that ends
 * (its exit code), tracefs_create_dir for a directory tracefs makes (an
 * event group or an event, by name). So probes on those functions see user
 * space at work, as they do on Linux (the thread's comm, not the process's,
 * is the one a trace line shows).
 *
 * Some system calls are the image's own work (kernelCalls.ts): open/openat/
 * creat run the image's do_sys_open -> do_sys_openat2, symlink/symlinkat its
 * do_symlinkat -> vfs_symlink, on the thread with the calling process's
 * address space in use (kthread_use_mm), while the process sleeps in the
 * call; the image answers with the request's id and the call's result.
 *
 * The thread asks with the user_init hypercall's serve form: first argument
 * USER_SERVE, second a buffer for struct user_request { long op; long
 * arg[4]; unsigned long mm; long id; char name[64]; }. It gets 1 with the
 * request in the buffer, sleeps while none is queued, and gets 0 once user
 * space has ended and the queue is empty. Requests queue only once user
 * space has started, at most QUEUE_MAX (the oldest dropped beyond that, as a
 * ring; a dropped call's process is answered -EAGAIN).
 *
 * The state is an object the kernel reaches (UserInit.service), never
 * closure variables, so that time travel puts it back with the machine.
 */
import type { Cpu } from '../../arch/types';
import { toVAddr } from '../../memory/address';
import { HypercallResult, NO_RESULT } from '../hypercalls';
import type { Kernel } from '../kernel';
import type { KTask } from '../task';

/** kp_user_init's argument asking for the next request (usersvc.c KP_USER_SERVE) */
export const USER_SERVE = 2n;
/** the image will start a thread serving user space: calls made before it first asks wait for it (KP_USER_WILL_SERVE) */
export const USER_WILL_SERVE = 9n;
export enum UserRequestOp { Clone = 1, Exit = 2, TracefsMkdir = 3, OpenAt = 4, SymlinkAt = 5 }
export interface UserRequest {
  op: UserRequestOp;
  args: readonly bigint[];
  name?: string;
  /** a call the image serves: the calling process's mm_struct address and the call's id */
  mm?: bigint;
  id?: number;
}

/** A system call the image's thread is serving: the process's task sleeps until `result` is set. */
export interface ImageCall { id: number; task: KTask; result?: bigint }

const QUEUE_MAX = 4096;
const NAME_MAX = 63;
const NARGS = 4;
const REQUEST_SIZE = 8 + NARGS * 8 + 8 + 8 + 64;

export class KernelService {
  readonly queue: UserRequest[] = [];
  /** the image's thread waiting for a request, and its buffer */
  waiting: { task: KTask; buf: number } | null = null;
  /** a thread has asked at least once, or the image said one will (USER_WILL_SERVE): requests are worth queueing */
  served = false;
  /** system calls handed to the image's thread and not answered yet, by id */
  readonly calls = new Map<number, ImageCall>();
  private nextId = 1;

  constructor(private readonly k: Kernel, private readonly ended: () => boolean) {}

  /** A request for the image's thread (dropped when no thread serves user space). */
  post(req: UserRequest): void {
    if (!this.served) return;
    if (this.waiting) {
      const w = this.waiting;
      this.waiting = null;
      this.write(w.buf, req);
      this.k.sched.wake(w.task, { reg: this.k.arch.abi.hypercall.ret, value: 1n });
      return;
    }
    this.queue.push(req);
    if (this.queue.length > QUEUE_MAX) {
      const dropped = this.queue.shift();
      if (dropped?.id !== undefined) this.complete(dropped.id, -11n); // -EAGAIN
    }
  }

  /** Hand a system call of `task` to the image's thread; the call's record (its result comes by complete()). */
  postCall(task: KTask, op: UserRequestOp, args: readonly bigint[], mm: bigint): ImageCall {
    const call: ImageCall = { id: this.nextId++, task };
    this.calls.set(call.id, call);
    this.post({ op, args, mm, id: call.id });
    return call;
  }

  /** The image's answer to call `id`: its result, and the process wakes. */
  complete(id: number, result: bigint): boolean {
    const call = this.calls.get(id);
    if (!call) return false;
    this.calls.delete(id);
    call.result = result;
    if (call.task.state === 'blocked') this.k.sched.wake(call.task);
    return true;
  }

  /** User space has ended: a waiting thread gets 0 (nothing more will come). */
  userSpaceEnded(): void {
    if (!this.waiting || this.queue.length) return;
    const w = this.waiting;
    this.waiting = null;
    this.k.sched.wake(w.task, { reg: this.k.arch.abi.hypercall.ret, value: 0n });
  }

  /** The serve hypercall: 1 and the request in `buf`, 0 when user space has ended, or sleep until one comes. */
  serve(cpu: Cpu, bufArg: bigint): HypercallResult {
    const buf = toVAddr(bufArg);
    if (buf === null) return -14n; // -EFAULT
    this.served = true;
    const next = this.queue.shift();
    if (next) { this.write(buf, next); return 1n; }
    if (this.ended()) return 0n;
    const me = this.k.currentTask(cpu.id);
    if (!me || this.waiting) return -16n; // -EBUSY: one thread serves
    this.waiting = { task: me, buf };
    me.state = 'blocked';
    this.k.sched.deschedule(cpu.id);
    return NO_RESULT;
  }

  private write(buf: number, req: UserRequest): void {
    const b = new Uint8Array(REQUEST_SIZE);
    const dv = new DataView(b.buffer);
    dv.setBigInt64(0, BigInt(req.op), true);
    req.args.slice(0, NARGS).forEach((v, i) => dv.setBigUint64(8 + i * 8, BigInt.asUintN(64, v), true));
    dv.setBigUint64(8 + NARGS * 8, req.mm ?? 0n, true);
    dv.setBigInt64(16 + NARGS * 8, BigInt(req.id ?? 0), true);
    if (req.name) b.set(new TextEncoder().encode(req.name).subarray(0, NAME_MAX), 24 + NARGS * 8);
    this.k.mem.writeBytes(buf, b);
  }
}

/** The kernel's service for user space, when user space was set up on it. */
export function kernelServiceOf(k: Kernel): KernelService | null {
  const u = k.userInit as { service?: KernelService } | null;
  return u?.service ?? null;
}
