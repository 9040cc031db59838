/**
 * The hypercall table: one handler per Hypercall number (emulator/kernel/abi.ts).
 * A handler returns the value for the result register, or NO_RESULT when it
 * switched the CPU away from the caller (the caller's result, if any, is
 * delivered when it runs again).
 */
import { Cpu } from '../arch/types';
import { MemoryFault } from '../memory/memory';
import { toVAddr } from '../memory/address';
import { Errno, Hypercall } from './abi';
import type { Kernel } from './kernel';
import { moduleTableOf } from './modules/modules';

export const NO_RESULT = Symbol('no result');
export type HypercallResult = bigint | typeof NO_RESULT;
export type HypercallHandler = (k: Kernel, cpu: Cpu, args: readonly bigint[]) => HypercallResult;

/** longest console write accepted in one call (longer writes are truncated, like a short write) */
export const CONSOLE_WRITE_MAX = 1 << 20;

const err = (name: keyof typeof Errno): bigint => BigInt(-Errno[name]);

/**
 * delete_module(const char *name, unsigned int flags) -> 0 / -errno: unload
 * a module by name, Linux's delete_module(2) (examples/include/linux/module.h
 * declares it for modules; ModuleTable.deleteModule has the semantics):
 * -ENOENT unknown (or no module ever loaded), -EWOULDBLOCK used by another
 * module, -EBUSY init running / being removed / no exit function, -EFAULT
 * bad name pointer. flags (O_NONBLOCK, O_TRUNC) are accepted and ignored:
 * the caller never waits, and forced unload is not configured.
 * abi.ts's Hypercall.DeleteModule (KP_HC_DELETE_MODULE in kprobe_image.h).
 */
export const HYPERCALL_DELETE_MODULE = Hypercall.DeleteModule;
/** MODULE_NAME_LEN - 1 */
const MODULE_NAME_MAX = 55;
const signed = (v: bigint): number => Number(BigInt.asIntN(64, v));

const UTF8 = new TextDecoder();

/**
 * The guest's (buf, len) as bytes, len capped at CONSOLE_WRITE_MAX; -EFAULT
 * for a buffer that is not a kernel address or not mapped.
 */
function boundedBuffer(cpu: Cpu, buf: bigint, len: bigint): Uint8Array | bigint {
  const u = BigInt.asUintN(64, len);
  const n = u > BigInt(CONSOLE_WRITE_MAX) ? CONSOLE_WRITE_MAX : Number(u);
  const a = toVAddr(buf);
  if (a === null) return err('EFAULT');
  try { return cpu.mem.readBytes(a, n); } catch (e) {
    if (e instanceof MemoryFault) return err('EFAULT');
    throw e;
  }
}

export const HYPERCALLS: ReadonlyMap<number, HypercallHandler> = new Map<number, HypercallHandler>([
  [Hypercall.ConsoleWrite, (k, cpu, [buf, len]) => {
    if (BigInt.asUintN(64, len) === 0n) return 0n;
    const bytes = boundedBuffer(cpu, buf, len);
    if (typeof bytes === 'bigint') return bytes;
    k.log.consoleBytes(cpu.id, bytes, k.clock.now(cpu.id));
    return BigInt(bytes.length);
  }],
  [Hypercall.PowerOff, (k, _cpu, [code]) => {
    k.powerOff(signed(code));
    return NO_RESULT;
  }],
  [Hypercall.ThreadCreate, (k, cpu, [fn, arg, cpuArg, commPtr]) => k.createThreadFromImage(cpu, fn, arg, signed(cpuArg), commPtr)],
  [Hypercall.Yield, (k, cpu) => {
    cpu.setReg(k.arch.abi.hypercall.ret, 0n);
    k.sched.schedule(cpu.id);
    return NO_RESULT;
  }],
  [Hypercall.ThreadExit, (k, cpu, [code]) => {
    k.exitCurrent(cpu.id, signed(code));
    return NO_RESULT;
  }],
  [Hypercall.CpuId, (_k, cpu) => BigInt(cpu.id)],
  [Hypercall.CurrentPid, (k, cpu) => BigInt(k.current(cpu.id)?.pid ?? 0)],
  [Hypercall.TimeNs, (k, cpu) => k.clock.now(cpu.id)],
  [Hypercall.Jiffies, (k, cpu) => k.clock.jiffies(cpu.id)],
  [Hypercall.ThreadJoin, (k, cpu, [pid]) => k.joinThread(cpu.id, signed(pid))],
  [Hypercall.NrCpus, k => BigInt(k.cpus.length)],
  [Hypercall.UserInit, (k, cpu, [wait]) => (k.userInit ? k.userInit.call(cpu, wait !== 0n) : 0n)],
  [Hypercall.TracePrintk, (k, cpu, [ip, buf, len]) => {
    const bytes = boundedBuffer(cpu, buf, len);
    if (typeof bytes === 'bigint') return bytes;
    k.tracePrintk?.(cpu.id, BigInt.asUintN(64, ip), UTF8.decode(bytes));
    return BigInt(bytes.length);
  }],
  [HYPERCALL_DELETE_MODULE, (k, cpu, [namePtr]) => {
    const a = toVAddr(namePtr);
    if (a === null) return err('EFAULT');
    let name: string;
    try { name = cpu.mem.readCString(a, MODULE_NAME_MAX); } catch (e) {
      if (e instanceof MemoryFault) return err('EFAULT');
      throw e;
    }
    const table = moduleTableOf(k);
    return table ? BigInt(table.deleteModule(name)) : err('ENOENT');
  }],
]);
