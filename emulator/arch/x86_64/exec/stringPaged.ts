/**
 * rep movs / rep stos (forward) on a full-system CPU, a page at a time:
 * the instruction's meaning is stringOp's (element by element, a fault at
 * the first element that cannot be accessed, with rcx/rsi/rdi describing
 * the progress made), and so is every side effect; only the work is
 * grouped. Each page run starts with one element done the ordinary way
 * (its page walk, its A/D bits, its #PF, a device's access); the rest of
 * the run inside the same source and destination pages then cannot fault
 * and has no further walk side effects, so it is copied or filled in the
 * physical RAM's bytes at once, and the code caches hear of the bytes
 * written (Memory.storedInPlace). A run the bytes cannot take at once
 * (a device, overlapping source and destination, an observed or watched
 * space, an element crossing a page) goes on element by element.
 */
import type { X86Cpu } from '../cpu';
import { PERM_R, PERM_W, type Region } from '../../../memory/memory';

const PAGE = 4096;
const inPage = (a: number): number => ((a % PAGE) + PAGE) % PAGE;

/** one element of movs (kind 0) or stos (kind 1), forward, as stringOp does it */
function element(cpu: X86Cpu, movs: boolean, size: number, seg: number): void {
  if (movs) {
    const s = cpu.regAddr(6), d = cpu.regAddr(7);
    const v = cpu.readM(size, s + seg), h = cpu.th;
    cpu.writeM(size, d, v, h);
    cpu.setRegAddr(6, s + size); cpu.setRegAddr(7, d + size);
  } else {
    const d = cpu.regAddr(7);
    const v = cpu.getR(size, 0);
    cpu.writeM(size, d, v, cpu.th);
    cpu.setRegAddr(7, d + size);
  }
  const l = cpu.lo[1];
  cpu.lo[1] = (l - 1) | 0;
  if (l === 0) cpu.hi[1] = (cpu.hi[1] - 1) | 0;
}

/** stos's value `k` times from region offset `off` */
function fill(r: Region, off: number, size: number, k: number, lo: number, hi: number): void {
  const b = r.bytes, v = r.view;
  const b0 = lo & 0xff;
  const uniform = size === 1 || (size === 2 && (lo & 0xffff) === b0 * 0x101)
    || (size === 4 && lo === (b0 * 0x01010101 | 0)) || (size === 8 && lo === (b0 * 0x01010101 | 0) && hi === lo);
  if (uniform) { b.fill(b0, off, off + k * size); return; }
  for (let j = 0; j < k; j++, off += size) {
    if (size === 2) v.setUint16(off, lo, true);
    else if (size === 4) v.setInt32(off, lo, true);
    else { v.setInt32(off, lo, true); v.setInt32(off + 4, hi, true); }
  }
}

/** rep movs (movs) or rep stos, df = 0, on a CPU with a system half; seg: the source's segment base */
export function repForwardPaged(cpu: X86Cpu, movs: boolean, size: number, seg: number): void {
  const mem = cpu.mem, phys = mem.directMemory;
  for (;;) {
    if ((cpu.lo[1] | cpu.hi[1]) === 0) return;
    element(cpu, movs, size, seg);
    if ((cpu.lo[1] | cpu.hi[1]) === 0) return;
    if (mem.watcher !== null || mem.isObserved || phys.watcher !== null || phys.isObserved) continue;
    const d = cpu.regAddr(7);
    let k = Math.floor((PAGE - inPage(d)) / size);
    if (cpu.hi[1] === 0) k = Math.min(k, cpu.lo[1] >>> 0);
    const s = movs ? cpu.regAddr(6) : 0;
    if (movs) k = Math.min(k, Math.floor((PAGE - inPage(s + seg)) / size));
    if (k < 1) continue;
    const len = k * size;
    // the source's translation first, then the destination's: the order of the element's accesses
    const ps = movs ? mem.directAddress(s + seg, false) : 0;
    if (Number.isNaN(ps)) continue;
    const pd = mem.directAddress(d, true);
    if (Number.isNaN(pd)) continue;
    const rd = phys.regionAt(pd, len);
    if (rd === undefined || rd.device || (rd.perms & PERM_W) === 0) continue;
    const od = pd - rd.base;
    if (movs) {
      const rs = phys.regionAt(ps, len);
      if (rs === undefined || rs.device || (rs.perms & PERM_R) === 0) continue;
      const os = ps - rs.base;
      const at = (r: Region, o: number): number => r.bytes.byteOffset + o;
      if (rs.bytes.buffer === rd.bytes.buffer && Math.abs(at(rs, os) - at(rd, od)) < len) continue;
      rd.bytes.set(rs.bytes.subarray(os, os + len), od);
      cpu.setRegAddr(6, s + len);
    } else {
      fill(rd, od, size, k, cpu.lo[0], cpu.hi[0]);
    }
    phys.storedInPlace(rd, pd, len);
    cpu.setRegAddr(7, d + len);
    const c = (cpu.lo[1] >>> 0) - k;
    if (c < 0) { cpu.lo[1] = c | 0; cpu.hi[1] = (cpu.hi[1] - 1) | 0; } else cpu.lo[1] = c | 0;
  }
}
