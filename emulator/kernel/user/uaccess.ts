/**
 * copy_from_user / copy_to_user: access a process's memory on its behalf,
 * honouring user permissions (PERM_U plus R or W). A bad pointer gives null
 * / false, which the system calls turn into -EFAULT.
 */
import { Memory, PERM_R, PERM_U, PERM_W } from '../../memory/memory';
import { VAddr, toVAddr } from '../../memory/address';

function userRange(mm: Memory, addr: bigint, len: number, perm: number): VAddr | null {
  const a = toVAddr(addr);
  if (a === null || len < 0) return null;
  let i = 0;
  while (i < len) {
    const r = mm.regionAt(a + i);
    if (!r || r.device || (r.perms & PERM_U) === 0 || (r.perms & perm) === 0) return null;
    i += Math.min(len - i, r.end - (a + i));
  }
  return a;
}

export function copyFromUser(mm: Memory, addr: bigint, len: number): Uint8Array | null {
  const a = userRange(mm, addr, len, PERM_R);
  return a === null ? null : mm.readBytes(a, len);
}

export function copyToUser(mm: Memory, addr: bigint, bytes: Uint8Array): boolean {
  const a = userRange(mm, addr, bytes.length, PERM_W);
  if (a === null) return false;
  mm.writeBytes(a, bytes, 'uaccess');
  return true;
}

/** Little-endian words (pointer size) as bytes. */
export function words(values: readonly bigint[], size: 4 | 8): Uint8Array {
  const out = new Uint8Array(values.length * size);
  const dv = new DataView(out.buffer);
  values.forEach((v, i) => {
    if (size === 8) dv.setBigUint64(i * 8, BigInt.asUintN(64, v), true);
    else dv.setUint32(i * 4, Number(BigInt.asUintN(32, v)), true);
  });
  return out;
}
