/**
 * Long-mode paging of the system half (SDM vol. 3 ch. 4.5, 4.6, 4.7, 4.8,
 * 4.10): the 4-level walk, rights, #PF error codes and CR2, A/D bits, large
 * pages, and the TLB flushed exactly as MOV CR3 / INVLPG / CR4.PGE demand;
 * decoded code dropped when its bytes or its mapping change.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, P, RW, US, A, D, G, NX, KCODE, KDATA, UDATA, RAX, RBX, UCODE } from './harness';
import { X86Exception, PF_P, PF_W, PF_U, PF_RSVD, PF_ID } from '../../../emulator/arch/x86_64/sysmode/exception';
import { ACC_EXEC, ACC_READ, ACC_WRITE } from '../../../emulator/arch/x86_64/sysmode/paging';
import { EFER_NXE, CR0_WP } from '../../../emulator/arch/x86_64/sysmode/state';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';

/** the #PF a translation raises: [error code, CR2] */
function pf(m: SysMachine, va: number, acc: number): [number, number] {
  try {
    m.mem.translate(va, acc);
  } catch (e) {
    assert.ok(e instanceof X86Exception, String(e));
    assert.equal(e.vector, 14);
    return [e.errorCode, e.cr2 as number];
  }
  assert.fail(`no #PF at 0x${va.toString(16)}`);
}
const HIGH = -0x80000000; // 0xffffffff80000000

describe('x86_64 4-level paging', () => {
  test('a 4 KiB page translates through PML4, PDPT, PD and PT; the high half too', () => {
    const m = new SysMachine();
    m.map(0x7000000n, 0x123000n, P | RW);
    assert.equal(m.mem.translate(0x7000abc, ACC_READ), 0x123abc);
    m.map(0xffffffff80000000n, 0x200000n, P | RW);
    assert.equal(m.mem.translate(HIGH + 0x10, ACC_WRITE), 0x200010);
    m.phys.writeBytes(0x200010, new Uint8Array([1, 2, 3, 4]));
    assert.equal(m.mem.read32(HIGH + 0x10), 0x04030201);
  });
  test('not present: #PF error 0 (read), 2 (write), 0x10 (fetch with NXE), CR2 = the address', () => {
    const m = new SysMachine();
    assert.deepEqual(pf(m, 0x7000010, ACC_READ), [0, 0x7000010]);
    assert.deepEqual(pf(m, 0x7000010, ACC_WRITE), [PF_W, 0x7000010]);
    assert.deepEqual(pf(m, 0x7000010, ACC_EXEC), [0, 0x7000010], 'I/D only with NXE');
    m.sys.efer |= EFER_NXE; m.sys.syncPaging();
    assert.deepEqual(pf(m, 0x7000010, ACC_EXEC), [PF_ID, 0x7000010]);
  });
  test('U/S and R/W: user reads of supervisor pages, user writes of read-only pages; CR0.WP for supervisor writes', () => {
    const m = new SysMachine();
    m.map(0x7000000n, 0x123000n, P); // supervisor, read-only
    m.map(0x7001000n, 0x124000n, P | US); // user, read-only
    m.mem.userMode = true;
    assert.deepEqual(pf(m, 0x7000000, ACC_READ), [PF_P | PF_U, 0x7000000]);
    assert.equal(m.mem.translate(0x7001008, ACC_READ), 0x124008);
    assert.deepEqual(pf(m, 0x7001008, ACC_WRITE), [PF_P | PF_W | PF_U, 0x7001008]);
    m.mem.userMode = false;
    // supervisor: WP = 0 lets it write read-only pages, WP = 1 does not
    m.sys.cr0 &= ~CR0_WP; m.sys.syncPaging();
    assert.equal(m.mem.translate(0x7000004, ACC_WRITE), 0x123004);
    m.sys.cr0 |= CR0_WP; m.sys.syncPaging(); m.mem.flushAll();
    assert.deepEqual(pf(m, 0x7000004, ACC_WRITE), [PF_P | PF_W, 0x7000004]);
    // an upper level's R/W = 0 makes the whole range read-only
    m.phys64(m.entry(0x7001000n, 2), m.read64(m.entry(0x7001000n, 2)) & ~RW);
    m.mem.flushAll();
    m.mem.userMode = true;
    assert.deepEqual(pf(m, 0x7001000, ACC_WRITE), [PF_P | PF_W | PF_U, 0x7001000]);
  });
  test('XD with EFER.NXE: fetch #PF P|I/D; without NXE bit 63 is reserved (RSVD)', () => {
    const m = new SysMachine();
    m.map(0x7000000n, 0x123000n, P | RW | NX);
    assert.deepEqual(pf(m, 0x7000000, ACC_READ), [PF_P | PF_RSVD, 0x7000000]);
    m.sys.efer |= EFER_NXE; m.sys.syncPaging(); m.mem.flushAll();
    assert.equal(m.mem.translate(0x7000000, ACC_READ), 0x123000);
    assert.deepEqual(pf(m, 0x7000000, ACC_EXEC), [PF_P | PF_ID, 0x7000000]);
  });
  test('reserved bits: bits 51:40 of an entry, PS in a PML4E, a 2 MiB page\'s bits 20:13', () => {
    const m = new SysMachine();
    m.map(0x7000000n, 0x123000n | (1n << 45n), P | RW);
    assert.deepEqual(pf(m, 0x7000000, ACC_WRITE), [PF_P | PF_RSVD | PF_W, 0x7000000]);
    m.mapLarge(0x40000000n, 0x600000n | 0x2000n, P | RW, 2);
    assert.deepEqual(pf(m, 0x40000000, ACC_READ), [PF_P | PF_RSVD, 0x40000000]);
    const e4 = m.entry(0x8000000000n, 4);
    m.phys64(e4, 0x100000n | P | RW | 0x80n);
    assert.deepEqual(pf(m, 0x8000000000, ACC_READ), [PF_P | PF_RSVD, 0x8000000000]);
  });
  test('2 MiB and 1 GiB pages map their offsets', () => {
    const m = new SysMachine();
    m.mapLarge(0x40000000n, 0x600000n, P | RW, 2);
    assert.equal(m.mem.translate(0x40000000 + 0x1f1234, ACC_READ), 0x600000 + 0x1f1234);
    m.mapLarge(0x80000000n, 0x40000000n, P | RW, 3);
    assert.equal(m.mem.translate(0x80000000 + 0x3456789, ACC_WRITE), 0x40000000 + 0x3456789);
  });
  test('A is set in every entry used, D in the leaf on a write; a failing access sets neither', () => {
    const m = new SysMachine();
    m.map(0x7000000n, 0x123000n, P | RW);
    const levels = [4, 3, 2, 1].map(l => m.entry(0x7000000n, l));
    for (const e of levels) m.phys64(e, m.read64(e) & ~(A | D));
    m.mem.userMode = true;
    pf(m, 0x7000000, ACC_READ); // supervisor page
    assert.ok(levels.every(e => (m.read64(e) & A) === 0n), 'no A after a fault');
    m.mem.userMode = false;
    m.mem.read8(0x7000000);
    assert.ok(levels.every(e => (m.read64(e) & A) === A), 'A everywhere');
    assert.equal(m.read64(levels[3]) & D, 0n, 'no D after a read');
    m.mem.write8(0x7000000, 1);
    assert.equal(m.read64(levels[3]) & D, D, 'D after a write');
    assert.equal(m.read64(levels[2]) & D, 0n, 'D only in the leaf');
  });
  test('an access crossing a page translates both pages; a write faulting on the second page writes nothing', () => {
    const m = new SysMachine();
    m.map(0x7000000n, 0x123000n, P | RW);
    m.map(0x7001000n, 0x200000n, P | RW);
    m.mem.write32(0x7000ffe, 0x44332211);
    assert.deepEqual([...m.phys.readBytes(0x123ffe, 2), ...m.phys.readBytes(0x200000, 2)], [0x11, 0x22, 0x33, 0x44]);
    assert.equal(m.mem.read32(0x7000ffe), 0x44332211);
    m.map(0x7001000n, 0x200000n, P); // now read-only, and supervisor writes honour it
    m.sys.cr0 |= CR0_WP; m.sys.syncPaging();
    m.mem.flushAll();
    assert.throws(() => m.mem.write64(0x7000ffc, -1n), (e: unknown) => e instanceof X86Exception && e.cr2 === 0x7001000);
    assert.deepEqual([...m.phys.readBytes(0x123ffc, 4)], [0, 0, 0x11, 0x22]);
  });
});

describe('x86_64 TLB', () => {
  test('a changed PTE is not seen until INVLPG (as hardware: the TLB holds the old translation)', () => {
    const m = new SysMachine();
    m.map(0x7000000n, 0x123000n, P | RW);
    assert.equal(m.mem.translate(0x7000000, ACC_READ), 0x123000);
    m.map(0x7000000n, 0x456000n, P | RW);
    assert.equal(m.mem.translate(0x7000000, ACC_READ), 0x123000, 'stale until invalidated');
    m.mem.invlpg(0x7000fff);
    assert.equal(m.mem.translate(0x7000000, ACC_READ), 0x456000);
  });
  test('MOV to CR3 flushes non-global entries; global ones stay until CR4.PGE is toggled', () => {
    const m = new SysMachine();
    // enable PGE through the instruction, then reload CR3 through the instruction
    m.map(0x7000000n, 0x123000n, P | RW | G);
    m.map(0x7001000n, 0x124000n, P | RW);
    m.code(KCODE, '0f 20 e0 48 0d 80 00 00 00 0f 22 e0 f4'); // mov rax,cr4; or rax,0x80; mov cr4,rax; hlt
    runSystemCpu(m.cpu, 100);
    assert.equal(m.sys.cr4 & 0x80, 0x80);
    m.mem.translate(0x7000000, ACC_READ);
    m.mem.translate(0x7001000, ACC_READ);
    m.map(0x7000000n, 0x555000n, P | RW | G);
    m.map(0x7001000n, 0x556000n, P | RW);
    m.sys.halted = false;
    m.code(KCODE + 0x100, '0f 20 d8 0f 22 d8 f4'); // mov rax,cr3; mov cr3,rax; hlt
    m.cpu.setPc(BigInt(KCODE + 0x100));
    runSystemCpu(m.cpu, 100);
    assert.equal(m.mem.translate(0x7000000, ACC_READ), 0x123000, 'global entry survives MOV CR3');
    assert.equal(m.mem.translate(0x7001000, ACC_READ), 0x556000, 'non-global entry flushed');
    m.sys.halted = false;
    m.code(KCODE + 0x200, '0f 20 e0 48 25 7f ff ff ff 0f 22 e0 f4'); // mov rax,cr4; and rax,~0x80; mov cr4,rax; hlt
    m.cpu.setPc(BigInt(KCODE + 0x200));
    runSystemCpu(m.cpu, 100);
    assert.equal(m.mem.translate(0x7000000, ACC_READ), 0x555000, 'CR4.PGE toggled: global entry flushed');
  });
  test('INVLPG of one address of a 2 MiB page drops every piece of it', () => {
    const m = new SysMachine();
    m.mapLarge(0x40000000n, 0x600000n, P | RW, 2);
    m.mem.translate(0x40000000, ACC_READ);
    m.mem.translate(0x40100000, ACC_READ);
    m.mapLarge(0x40000000n, 0x800000n, P | RW, 2);
    m.setReg(RAX, 0x40000000n);
    m.code(KCODE, '0f 01 38 f4'); // invlpg [rax]; hlt
    runSystemCpu(m.cpu, 10);
    assert.equal(m.mem.translate(0x40100000, ACC_READ), 0x900000);
  });
  test('decoded code is dropped when its bytes are written through another mapping, and when its mapping changes', () => {
    const m = new SysMachine();
    m.map(0x7000000n, 0x300000n, P | RW); // code at 0x7000000
    m.map(0x7100000n, 0x300000n, P | RW); // an alias of the same page (text_poke's way)
    m.phys.writeBytes(0x300000, new Uint8Array([0x48, 0xff, 0xc0, 0xf4])); // inc rax; hlt
    m.cpu.setPc(0x7000000n);
    runSystemCpu(m.cpu, 10);
    assert.equal(m.reg(RAX), 1n);
    m.setReg(RBX, 0x7100000n);
    m.code(KCODE, 'c6 43 02 c3 f4'); // mov byte [rbx+2], 0xc3 (inc rax -> inc rbx); hlt
    m.sys.halted = false; m.cpu.setPc(BigInt(KCODE));
    runSystemCpu(m.cpu, 10);
    m.sys.halted = false; m.cpu.setPc(0x7000000n);
    runSystemCpu(m.cpu, 10);
    assert.equal(m.reg(RAX), 1n, 'the old instruction is gone');
    assert.equal(m.reg(RBX), 0x7100001n);
    // now the same linear page maps other bytes: MOV CR3 drops what was decoded there
    m.phys.writeBytes(0x301000, new Uint8Array([0x48, 0xff, 0xc1, 0xf4])); // inc rcx; hlt
    m.map(0x7000000n, 0x301000n, P | RW);
    m.code(KCODE, '0f 20 d8 0f 22 d8 f4');
    m.sys.halted = false; m.cpu.setPc(BigInt(KCODE));
    runSystemCpu(m.cpu, 10);
    m.sys.halted = false; m.cpu.setPc(0x7000000n);
    runSystemCpu(m.cpu, 10);
    assert.equal(m.reg(1), 1n, 'rcx counted: the new page ran');
  });
  test('the debugger\'s view (readBytes) walks without touching A/D or the TLB', () => {
    const m = new SysMachine();
    m.map(BigInt(UDATA) + 0x10000n, 0x123000n, P | RW);
    const e = m.entry(BigInt(UDATA) + 0x10000n, 1);
    m.phys64(e, m.read64(e) & ~A);
    m.phys.writeBytes(0x123010, new Uint8Array([9, 8, 7]));
    assert.deepEqual([...m.mem.readBytes(UDATA + 0x10010, 3)], [9, 8, 7]);
    assert.equal(m.read64(e) & A, 0n);
    assert.equal(m.mem.virtToPhys(KDATA + 5), KDATA + 5);
    assert.equal(m.mem.virtToPhys(0x7000000), null);
    assert.equal(m.mem.isMapped(UCODE, 0x1000), true);
  });
});
