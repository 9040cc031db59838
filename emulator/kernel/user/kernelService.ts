/**
 * The kernel image's part of what user space does. User processes' system
 * calls are served here, below the image; what Linux does in kernel
 * functions on their behalf is queued for the image's kernel threads
 * (examples/kernel/usersvc.c: kusersvc/N, one per CPU), which call the functions of Linux's names
 * with the same arguments: kernel_clone for a fork / vfork / clone (its
 * clone flags | exit signal, its new stack), do_exit for a process that ends
 * (its exit code), tracefs_create_dir for a directory tracefs makes (an
 * event group or an event, by name). So probes on those functions see user
 * space at work, as they do on Linux (the thread's comm, not the process's,
 * is the one a trace line shows). A system call goes to the thread of its
 * caller's CPU, woken ahead of the run queue, so it runs as soon as the
 * caller sleeps, and the caller runs next once it has answered.
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
/** the image will start threads serving user space: calls made before they first ask wait for them (KP_USER_WILL_SERVE; -> how many programs the machine was given) */
export const USER_WILL_SERVE = 9n;
export enum UserRequestOp { Clone = 1, Exit = 2, TracefsMkdir = 3, OpenAt = 4, SymlinkAt = 5 }
export interface UserRequest {
  op: UserRequestOp;
  args: readonly bigint[];
  name?: string;
  /** a call the image serves: the calling process's mm_struct address, the call's id, the caller's CPU */
  mm?: bigint;
  id?: number;
  cpu?: number;
}

/** A system call the image's thread is serving: the process's task sleeps until `result` is set. */
export interface ImageCall { id: number; task: KTask; result?: bigint }

const QUEUE_MAX = 4096;
const NAME_MAX = 63;
const NARGS = 4;
const REQUEST_SIZE = 8 + NARGS * 8 + 8 + 8 + 64;

export class KernelService {
  readonly queue: UserRequest[] = [];
  /** the image's threads waiting for a request, by CPU, and their buffers (one thread per CPU serves) */
  readonly waiting = new Map<number, { task: KTask; buf: number }>();
  /** CPUs whose thread has asked at least once */
  readonly servers = new Set<number>();
  /** a thread has asked at least once, or the image said one will (USER_WILL_SERVE): requests are worth queueing */
  served = false;
  /** system calls handed to the image's threads and not answered yet, by id */
  readonly calls = new Map<number, ImageCall>();
  private nextId = 1;

  constructor(private readonly k: Kernel, private readonly ended: () => boolean) {}

  /** whether the thread of CPU `cpu` is the one to serve `req` (a call goes to its caller's CPU's thread, when there is one) */
  private takes(cpu: number, req: UserRequest): boolean {
    return req.cpu === undefined || req.cpu === cpu || !this.servers.has(req.cpu);
  }

  /** A request for the image's threads (dropped when no thread serves user space). */
  post(req: UserRequest): void {
    if (!this.served) return;
    for (const [cpu, w] of this.waiting) {
      if (!this.takes(cpu, req)) continue;
      this.waiting.delete(cpu);
      this.write(w.buf, req);
      // a process sleeps in a call the thread serves: the thread runs next on its CPU (the caller's),
      // as soon as the caller sleeps
      if (req.id !== undefined) this.k.sched.wakeFirst(w.task, { reg: this.k.arch.abi.hypercall.ret, value: 1n });
      else this.k.sched.wake(w.task, { reg: this.k.arch.abi.hypercall.ret, value: 1n });
      return;
    }
    this.queue.push(req);
    if (this.queue.length > QUEUE_MAX) {
      const dropped = this.queue.shift();
      if (dropped?.id !== undefined) this.complete(dropped.id, -11n); // -EAGAIN
    }
  }

  /** Hand a system call of `task` to the image's thread of its CPU; the call's record (its result comes by complete()). */
  postCall(task: KTask, op: UserRequestOp, args: readonly bigint[], mm: bigint): ImageCall {
    const call: ImageCall = { id: this.nextId++, task };
    this.calls.set(call.id, call);
    this.post({ op, args, mm, id: call.id, cpu: task.cpu });
    return call;
  }

  /** The image's answer to call `id`: its result, and the process wakes. */
  complete(id: number, result: bigint): boolean {
    const call = this.calls.get(id);
    if (!call) return false;
    this.calls.delete(id);
    call.result = result;
    // the caller goes on next on its CPU, as it would have had the call not slept (the thread is its CPU's)
    if (call.task.state === 'blocked') this.k.sched.wakeFirst(call.task);
    return true;
  }

  /** User space has ended: waiting threads get 0 (nothing more will come). */
  userSpaceEnded(): void {
    if (this.queue.length) return;
    for (const w of this.waiting.values()) this.k.sched.wake(w.task, { reg: this.k.arch.abi.hypercall.ret, value: 0n });
    this.waiting.clear();
  }

  /** The serve hypercall: 1 and the request in `buf`, 0 when user space has ended, or sleep until one comes. */
  serve(cpu: Cpu, bufArg: bigint): HypercallResult {
    const buf = toVAddr(bufArg);
    if (buf === null) return -14n; // -EFAULT
    this.served = true;
    this.servers.add(cpu.id);
    const at = this.queue.findIndex(r => this.takes(cpu.id, r));
    if (at >= 0) { this.write(buf, this.queue.splice(at, 1)[0]); return 1n; }
    if (this.ended()) return 0n;
    const me = this.k.currentTask(cpu.id);
    if (!me || this.waiting.has(cpu.id)) return -16n; // -EBUSY: one thread per CPU serves
    this.waiting.set(cpu.id, { task: me, buf });
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
