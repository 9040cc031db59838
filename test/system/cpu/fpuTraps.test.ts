/**
 * #NM and the x87/SSE #UD cases of the system half, register-level against
 * the SDM (vol. 3 2.5 "CR0": EM, TS, MP; 13.1 CR4.OSFXSR; vol. 2's
 * exception tables of FLD, MOVAPS, FXSAVE, LDMXCSR, WAIT): the exception
 * delivered with the faulting instruction's rip and no error code, nothing
 * the instruction would change changed; CLTS clears TS and the instruction
 * then runs; the check also holds in translated code (CR0 changes after the
 * code was translated). A CPU without the system half runs them as before.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { SysMachine, installHandlers, runToHandler, KCODE, KDATA, RAX, RCX, USER_CS, UCODE } from './harness';
import { machine } from '../../fixtures/x86/harness';
import { runSystemCpu } from '../../../emulator/arch/x86_64/sysmode/systemCpu';
import { CR0_EM, CR0_MP, CR0_TS, CR4_OSFXSR } from '../../../emulator/arch/x86_64/sysmode/state';
import { allTranslators } from '../../../emulator/jit';

/** instructions the x86_64 translator of a mode has run translated so far */
const translated = (mode: string): number => allTranslators().get(`x86_64:${mode}`)?.stats.translatedInsns ?? 0;

const FLD1 = 'd9 e8', MOVAPS = '0f 28 c1' /* movaps xmm0, xmm1 */, FXSAVE = '0f ae 00' /* fxsave [rax] */,
  LDMXCSR = '0f ae 10' /* ldmxcsr [rax] */, FWAIT = '9b', CLTS = '0f 06';

/** a machine at CPL 0 with `cr0 |= set`, CR4.OSFXSR as asked, the code at KCODE, rax = KDATA */
function at(code: string, set: number, osfxsr = true): SysMachine {
  const m = new SysMachine();
  installHandlers(m);
  m.sys.cr0 = (m.sys.cr0 | set) >>> 0;
  m.sys.cr4 = osfxsr ? m.sys.cr4 | CR4_OSFXSR : m.sys.cr4 & ~CR4_OSFXSR;
  m.setReg(RAX, BigInt(KDATA));
  m.code(KCODE, code);
  return m;
}
/** the vector the code's first instruction raised (its rip pushed), or 'ran' when it ran to the hlt after it */
function outcome(code: string, set: number, osfxsr = true): number | 'ran' {
  const m = at(`${code} f4`, set, osfxsr);
  const r = runSystemCpu(m.cpu, 10);
  if (r.halted && m.cpu.getPc() === BigInt(KCODE + code.split(' ').length + 1)) return 'ran';
  m.sys.halted = false;
  m.cpu.setPc(BigInt(KCODE));
  const d = runToHandler(m);
  assert.equal(d.rip, BigInt(KCODE), `${code}: the faulting instruction's rip`);
  assert.equal(d.errorCode, undefined);
  return d.vector;
}

describe('#NM and CR0.EM / CR0.TS / CR4.OSFXSR', () => {
  test('CR0.TS: x87, SSE, fxsave and ldmxcsr raise #NM (vector 7, no error code, rip at the instruction)', () => {
    for (const code of [FLD1, MOVAPS, FXSAVE, LDMXCSR]) assert.equal(outcome(code, CR0_TS), 7, code);
  });
  test('CR0.EM: x87 and fxsave #NM, SSE and ldmxcsr #UD (EM is checked before TS)', () => {
    assert.deepEqual([FLD1, FXSAVE, MOVAPS, LDMXCSR].map(c => outcome(c, CR0_EM)), [7, 7, 6, 6]);
    assert.deepEqual([FLD1, MOVAPS].map(c => outcome(c, CR0_EM | CR0_TS)), [7, 6]);
  });
  test('CR4.OSFXSR clear: SSE #UD (even with TS set), x87 runs', () => {
    assert.deepEqual([MOVAPS, LDMXCSR, FLD1].map(c => outcome(c, 0, false)), [6, 6, 'ran']);
    assert.equal(outcome(MOVAPS, CR0_TS, false), 6);
  });
  test('fwait: #NM only with both MP and TS set', () => {
    assert.deepEqual([CR0_TS, CR0_MP, CR0_MP | CR0_TS, 0].map(f => outcome(FWAIT, f & ~CR0_EM)), ['ran', 'ran', 7, 'ran']);
  });
  test('nothing changes when #NM is raised; CLTS clears TS and the instruction then runs', () => {
    const m = at(`${MOVAPS} f4`, CR0_TS);
    m.cpu.xd.set([1, 2, 3, 4], 4); // xmm1
    const d = runToHandler(m);
    assert.equal(d.vector, 7);
    assert.deepEqual([...m.cpu.xd.slice(0, 4)], [0, 0, 0, 0], 'xmm0 untouched');
    // the handler's way (Linux's old lazy FPU switch): clts, then return to the instruction
    const c = at(`${CLTS} ${MOVAPS} f4`, CR0_TS);
    c.cpu.xd.set([1, 2, 3, 4], 4);
    const r = runSystemCpu(c.cpu, 10);
    assert.equal(r.halted, true);
    assert.equal(c.sys.cr0 & CR0_TS, 0);
    assert.deepEqual([...c.cpu.xd.slice(0, 4)], [1, 2, 3, 4]);
  });
  test('at CPL 3 too (the delivery is to CPL 0 with the user frame); CLTS at CPL 3 #GP(0)', () => {
    const m = new SysMachine();
    installHandlers(m);
    m.sys.cr0 = (m.sys.cr0 | CR0_TS) >>> 0;
    m.sys.cr4 |= CR4_OSFXSR;
    m.code(UCODE, `${MOVAPS} ${CLTS}`);
    m.toUser(UCODE);
    const d = runToHandler(m);
    assert.deepEqual([d.vector, d.cs, d.rip], [7, USER_CS, BigInt(UCODE)]);
    const g = new SysMachine(); installHandlers(g);
    g.code(UCODE, CLTS);
    g.toUser(UCODE);
    const e = runToHandler(g);
    assert.deepEqual([e.vector, e.errorCode, e.rip], [13, 0, BigInt(UCODE)]);
  });
  test('translated code sees a TS set after it was translated: #NM at the instruction, in every translator mode', () => {
    // mov ecx, 5000; L: movaps xmm0, xmm1; dec ecx; jnz L; mov rax, cr0; or rax, 8; mov cr0, rax; mov ecx, 7; jmp L
    const code = 'b9 88 13 00 00 0f 28 c1 ff c9 75 f9 0f 20 c0 48 83 c8 08 0f 22 c0 b9 07 00 00 00 eb e8';
    const seen = new Set<string>();
    for (const mode of ['off', 'on', 'lockstep'] as const) {
      const before = translated(mode);
      const m = new SysMachine(mode);
      installHandlers(m);
      m.sys.cr4 |= CR4_OSFXSR;
      m.code(KCODE, code);
      const d = runToHandler(m, 100_000);
      seen.add(JSON.stringify([d.vector, Number(d.rip - BigInt(KCODE)), Number(m.reg(RCX)), m.cpu.instret]));
      if (mode !== 'off') assert.ok(translated(mode) > before, `${mode}: the loop ran translated`);
    }
    // 1 + 5000 * 3 + 3 + 2 retired, the movaps not, the handler's hlt
    assert.deepEqual([...seen], [JSON.stringify([7, 5, 7, 15_007])]);
  });
});

describe('without the system half', () => {
  test('the emulated kernel\'s CPU has no CR0: x87 and SSE run as before', () => {
    const { cpu } = machine(`${FLD1} ${MOVAPS} ${FWAIT}`);
    assert.equal(cpu.run(3).trap, null);
  });
});
