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

/** A NUL-terminated string of user memory (at most max bytes before the NUL), or null when unreadable / too long. */
export function readUserString(mm: Memory, addr: bigint, max: number): string | null {
  const a = toVAddr(addr);
  if (a === null) return null;
  const bytes: number[] = [];
  for (let i = 0; i <= max; i++) {
    const r = mm.regionAt(a + i);
    if (!r || r.device || (r.perms & PERM_U) === 0 || (r.perms & PERM_R) === 0) return null;
    const b = mm.read8(a + i);
    if (b === 0) return new TextDecoder().decode(Uint8Array.from(bytes));
    bytes.push(b);
  }
  return null;
}

/** A NULL-terminated array of user pointers (argv, envp) as strings, or null when unreadable. */
export function readUserStrings(mm: Memory, addr: bigint, ptrSize: 4 | 8, maxCount = 4096): string[] | null {
  if (addr === 0n) return [];
  const out: string[] = [];
  for (let i = 0; i < maxCount; i++) {
    const w = copyFromUser(mm, addr + BigInt(i * ptrSize), ptrSize);
    if (!w) return null;
    let p = 0n;
    for (let j = ptrSize - 1; j >= 0; j--) p = (p << 8n) | BigInt(w[j]);
    if (p === 0n) return out;
    const s = readUserString(mm, p, 131072);
    if (s === null) return null;
    out.push(s);
  }
  return null;
}
