/**
 * What a registration API returns inside the engine: 0, or the errno with
 * the reason the check that refused it gives (Linux returns only the errno
 * and logs nothing; the debugger shows the reason:
 * "register_kprobe failed: -EINVAL (address is inside the kprobe blacklist)").
 * The public register_* methods keep Linux's signature and return the errno.
 */
import { Errno } from '../kernel/abi';
import type { Kprobe } from './kprobe';

/** A refused registration: negative errno and why. */
export interface KprobeRegError {
  readonly errno: number;
  readonly reason: string;
}

export type KprobeRegResult = 0 | KprobeRegError;

export function regFailed(errno: number, reason: string): KprobeRegError {
  return { errno, reason };
}

/** 0 or the negative errno */
export function errnoOf(r: KprobeRegResult): number {
  return r === 0 ? 0 : r.errno;
}

/** kprobe_addr()'s refusals: -ENOENT unknown symbol, -EINVAL neither or both of symbol and address */
export function addrFailure(p: Kprobe, errno: number): KprobeRegError {
  return regFailed(errno, errno === -Errno.ENOENT ? `unknown symbol '${p.symbol_name}'` : 'give either a symbol or an address');
}

/** a field of the caller's structure of the wrong type or out of range (validate.ts) */
export function fieldFailure(errno: number, what: string): KprobeRegError {
  return regFailed(errno, errno === -Errno.E2BIG ? `${what}: data_size is above KRETPROBE_MAX_DATA_SIZE` : `${what}: a field has the wrong type or is out of range`);
}
