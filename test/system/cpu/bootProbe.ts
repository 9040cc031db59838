/**
 * A figure script, not a test and not the machine (the platform and its
 * loader are emulator/system/'s): how far a real bzImage gets on the
 * system-mode CPU alone, entered by the 64-bit boot protocol with a
 * minimal zero page (e820, command line), identity-mapped 4 GiB, a boot
 * GDT, and a platform with a write-only serial port and nothing else (no
 * timer, no interrupt controller). Prints the serial output, the MSRs the
 * kernel missed, and instructions / host seconds at each 20 M.
 *
 *   node out/test/system/cpu/bootProbe.js VMLINUZ [instructions] ["command line"]
 */
import { readFileSync } from 'fs';
import { Memory, PERM_R, PERM_W, PERM_X } from '../../../emulator/memory/memory';
import { createSystemCpu, runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';
import type { X86Platform } from '../../../emulator/arch/x86_64/sysmode/state';

const [file, limitArg, cmdArg] = process.argv.slice(2);
if (!file) { console.error('usage: bootProbe.js VMLINUZ [instructions] ["command line"]'); process.exit(2); }
const img = readFileSync(file);
if (img.toString('latin1', 0x202, 0x206) !== 'HdrS' || (img.readUInt16LE(0x236) & 1) === 0) { console.error(`${file}: not a 64-bit bzImage`); process.exit(2); }
const RAM = 512 << 20, LOAD = 0x1000000, ZP = 0x7000, CMD = 0x20000, PML4 = 0x9000, GDT = 0xf000;
const phys = new Memory('physical');
phys.map(0, RAM, PERM_R | PERM_W | PERM_X, 'ram');
const setupSects = img[0x1f1] || 4;
phys.writeBytes(LOAD, img.subarray((setupSects + 1) * 512));
const zp = new Uint8Array(4096), dv = new DataView(zp.buffer);
zp.set(img.subarray(0x1f1, 0x202 + img[0x201]), 0x1f1);
dv.setUint8(0x210, 0xff); // type_of_loader: undefined
dv.setUint8(0x211, zp[0x211] | 0x80); // CAN_USE_HEAP
dv.setUint16(0x224, 0xde00, true);
dv.setUint32(0x228, CMD, true);
const e820: [number, number][] = [[0, 0x9fc00], [0x100000, RAM - 0x100000]];
dv.setUint8(0x1e8, e820.length);
e820.forEach(([a, s], k) => { dv.setBigUint64(0x2d0 + 20 * k, BigInt(a), true); dv.setBigUint64(0x2d8 + 20 * k, BigInt(s), true); dv.setUint32(0x2e0 + 20 * k, 1, true); });
phys.writeBytes(ZP, zp);
phys.writeBytes(CMD, Buffer.from(`${cmdArg ?? 'console=ttyS0 earlyprintk=serial,ttyS0,115200 nokaslr'}\0`));
const w64 = (a: number, v: bigint): void => { const b = Buffer.alloc(8); b.writeBigUInt64LE(v); phys.writeBytes(a, b); };
w64(PML4, BigInt(PML4 + 0x1000) | 3n);
for (let g = 0; g < 4; g++) {
  const pd = PML4 + 0x2000 + 0x1000 * g;
  w64(PML4 + 0x1000 + 8 * g, BigInt(pd) | 3n);
  for (let k = 0; k < 512; k++) w64(pd + 8 * k, BigInt(g * 0x40000000 + k * 0x200000) | 0x83n);
}
w64(GDT + 0x10, 0x00af9a000000ffffn);
w64(GDT + 0x18, 0x00cf92000000ffffn);
let instret = 0;
// the virtual clock: one nanosecond per instruction retired (read live: a TSC read inside a run sees it move)
// eslint-disable-next-line prefer-const
const platform: X86Platform = {
  io: {
    in: (p, s) => (p === 0x3fd ? 0x60 : s === 1 ? 0xff : s === 2 ? 0xffff : 0xffffffff),
    out: (p, _s, v) => { if (p === 0x3f8) process.stdout.write(String.fromCharCode(v & 0xff)); },
  },
  irq: { pendingVector: () => -1, acknowledge: () => { /* none */ }, nmiPending: () => false },
  msrs: { rdmsr: () => undefined, wrmsr: () => false },
  // the virtual clock: one nanosecond per instruction retired, read live (a TSC read inside a run sees it move)
  clock: { nowNs: () => BigInt(cpu.instret), tscHz: 1_000_000_000n },
};
const cpu = createSystemCpu(0, phys, platform, { rip: BigInt(LOAD + 0x200), cr3: BigInt(PML4), gdtBase: BigInt(GDT), gdtLimit: 0x1f, regs: new Map([[6, BigInt(ZP)]]) });
cpu.sys!.log = l => console.log(`\n[cpu] ${l}`);
const limit = Number(limitArg ?? 150e6);
const t0 = process.hrtime.bigint();
const secs = (): string => (Number(process.hrtime.bigint() - t0) / 1e9).toFixed(1);
while (instret < limit) {
  const r = runSystemCpu(cpu, 1_000_000);
  instret = cpu.instret;
  if (r.event) { console.log(`\n[machine] ${r.event.kind}: ${r.event.detail} at 0x${r.event.rip.toString(16)}`); break; }
  if (r.halted) { console.log(`\n[machine] halted at 0x${cpu.getPc().toString(16)}`); break; }
  if (instret % 20_000_000 < 1_000_000) console.log(`\n[${instret / 1e6} M instructions, ${secs()} s, rip 0x${cpu.getPc().toString(16)}]`);
}
const names = ['rax', 'rcx', 'rdx', 'rbx', 'rsp', 'rbp', 'rsi', 'rdi', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14', 'r15'];
console.log(`\n[rip 0x${cpu.getPc().toString(16)} ${names.map((n, r) => `${n} ${(BigInt(cpu.hi[r] >>> 0) << 32n | BigInt(cpu.lo[r] >>> 0)).toString(16)}`).join(' ')}]`);
console.log(`\n[${instret} instructions in ${secs()} s: ${(instret / 1e6 / Number(secs())).toFixed(2)} M/s]`);
