/**
 * Checks of the caller's structures before the registration APIs touch
 * anything: a field of the wrong type or out of range is -EINVAL (or the
 * errno Linux returns for it), never a JS exception out of the API. The
 * TypeScript types already say what is valid; these checks are for values
 * that come from elsewhere (the handler language, the debugger, JSON).
 */
import { Errno } from '../kernel/abi';
import type { Jprobe, Kprobe, Kretprobe } from './kprobe';

/** KRETPROBE_MAX_DATA_SIZE (include/linux/kprobes.h) */
export const KRETPROBE_MAX_DATA_SIZE = 4096;

function isFn(v: unknown): boolean {
  return v === undefined || typeof v === 'function';
}

/** struct kprobe fields: 0 or -EINVAL */
export function validateKprobe(p: unknown): number {
  if (typeof p !== 'object' || p === null) return -Errno.EINVAL;
  const k = p as Kprobe;
  if (k.addr !== undefined && typeof k.addr !== 'bigint') return -Errno.EINVAL;
  if (k.offset !== undefined && typeof k.offset !== 'bigint') return -Errno.EINVAL;
  if (k.symbol_name !== undefined && typeof k.symbol_name !== 'string') return -Errno.EINVAL;
  if (k.flags !== undefined && (typeof k.flags !== 'number' || !Number.isInteger(k.flags))) return -Errno.EINVAL;
  if (!isFn(k.pre_handler) || !isFn(k.post_handler) || !isFn(k.fault_handler)) return -Errno.EINVAL;
  return 0;
}

/** struct kretprobe fields (the kprobe's too): 0, -EINVAL, or -E2BIG for data_size > KRETPROBE_MAX_DATA_SIZE */
export function validateKretprobe(rp: unknown): number {
  if (typeof rp !== 'object' || rp === null) return -Errno.EINVAL;
  const r = rp as Kretprobe;
  const kv = validateKprobe(r.kp);
  if (kv) return kv;
  if (!isFn(r.handler) || !isFn(r.entry_handler)) return -Errno.EINVAL;
  if (r.maxactive !== undefined && (typeof r.maxactive !== 'number' || !Number.isSafeInteger(r.maxactive))) return -Errno.EINVAL;
  const ds = r.data_size;
  if (ds !== undefined && (typeof ds !== 'number' || !Number.isSafeInteger(ds) || ds < 0)) return -Errno.EINVAL;
  if ((ds ?? 0) > KRETPROBE_MAX_DATA_SIZE) return -Errno.E2BIG;
  return 0;
}

/** struct jprobe fields: 0 or -EINVAL */
export function validateJprobe(jp: unknown): number {
  if (typeof jp !== 'object' || jp === null) return -Errno.EINVAL;
  const j = jp as Jprobe;
  const kv = validateKprobe(j.kp);
  if (kv) return kv;
  return typeof j.entry === 'function' ? 0 : -Errno.EINVAL;
}

/** the array argument of register_kprobes & co: a non-empty array */
export function validateArray(a: unknown): boolean {
  return Array.isArray(a) && a.length > 0;
}
