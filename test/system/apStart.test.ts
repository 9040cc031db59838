/**
 * apStartState: an application processor started at the SIPI straight in
 * long mode, from the kernel's real-mode blob (struct real_mode_header and
 * struct trampoline_header, as Linux 6.1's setup_real_mode() fills them),
 * with and without CONFIG_AMD_MEM_ENCRYPT's extra header field.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { Memory, PERM_R, PERM_W, PERM_X } from '../../emulator/memory/memory';
import { apStartState } from '../../emulator/system/apStart';

const HDR = 0x98000, TEXT = 0x99000, TH = 0x9b000, PGD = 0x9c000, START = 0xffffffff81000070n;
function blob(sevField: boolean): Memory {
  const m = new Memory('physical');
  m.map(0, 0x100000, PERM_R | PERM_W | PERM_X, 'ram');
  const words = [TEXT, 0x9a000, TEXT, TH, ...(sevField ? [0x99800] : []), 0x99400, PGD, 0x9d000];
  words.forEach((w, k) => m.write32(HDR + 4 * k, w));
  m.write64(TH, START);
  m.write64(TH + 8, 0x901n); // EFER as setup_real_mode stores it: without LMA
  m.write32(TH + 16, 0xb0);
  m.write64(PGD, 0x3800067n);
  m.write64(PGD + 511 * 8, 0x2a15067n);
  return m;
}

describe('apStartState', () => {
  for (const sev of [true, false]) {
    test(`reads start, EFER, CR4 and trampoline_pgd ${sev ? 'with' : 'without'} the SEV-ES trampoline field`, () => {
      const st = apStartState(blob(sev), TEXT >> 12);
      assert.notEqual(typeof st, 'string', String(st));
      if (typeof st === 'string') return;
      assert.equal(st.rip, START);
      assert.equal(st.cr3, BigInt(PGD));
      assert.equal(st.cr4, 0xb0);
      assert.equal(st.efer, 0xd01n, 'LMA set: the AP is in long mode');
      assert.equal((st.cr0! & 0x80000001) >>> 0, 0x80000001, 'PG and PE');
      assert.equal(st.regs!.get(4), 0x1000n, 'the stack: the top of page 0, writable in the direct map');
    });
  }

  test('a SIPI vector with no real-mode header below it: a reason, not a start', () => {
    const m = new Memory('physical');
    m.map(0, 0x100000, PERM_R | PERM_W | PERM_X, 'ram');
    assert.match(String(apStartState(m, 0x99)), /no real_mode_header found below 0x99000/);
  });
});
