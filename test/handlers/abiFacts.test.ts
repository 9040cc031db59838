/**
 * ABI facts (emulator/arch/abiFacts.ts): emulated arches answer from their
 * ArchOps table, the others from the static table; the handler language
 * takes argument registers and plain char signedness from them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { abiFactsArches, abiFactsFor, abiFactsForRegs, abiFactsFromArchOps, canonicalArchName, staticAbiFacts } from '../../emulator/arch/abiFacts';
import { archByName, supportedArchNames } from '../../emulator/arch/registry';
import { PORTS } from '../../emulator/ports';
import { compileHandler, compileLogMessage, defaultArgRegs, pcRegOf } from '../../emulator/handlers';
import { FakeEnv, X86_REGS } from './fakeEnv';

const AARCH64_REGS = [...Array.from({ length: 31 }, (_, i) => `x${i}`), 'sp', 'pc', 'pstate'];
const RISCV_REGS = ['epc', 'ra', 'sp', 'gp', 'tp', 't0', 't1', 't2', 's0', 's1', 'a0', 'a1', 'a2', 'a3', 'a4', 'a5', 'a6', 'a7', 'status'];

describe('ABI facts by arch', () => {
  test('an emulated arch answers from its ArchOps table (argument, return, pc, sp registers by pt_regs name)', () => {
    for (const name of supportedArchNames()) {
      const ops = archByName(name)!;
      const f = abiFactsFor(name)!;
      assert.equal(f.source, 'archOps');
      assert.equal(f.charSigned, ops.abi.charSigned);
      assert.deepEqual(f.argRegs, ops.abi.argRegs.map(i => ops.regs[i].name));
      assert.equal(f.retReg, ops.regs[ops.abi.retReg].name);
      assert.equal(f.pcReg, ops.regs[ops.abi.pcReg].name);
      assert.equal(f.spReg, ops.regs[ops.abi.spReg].name);
    }
    const x = abiFactsFor('x86_64')!;
    assert.deepEqual([x.argRegs, x.retReg, x.pcReg, x.spReg, x.charSigned, x.optprobes], [['di', 'si', 'dx', 'cx', 'r8', 'r9'], 'ax', 'ip', 'sp', true, true]);
  });

  test('the static table lists no ported arch: a port\'s facts live once, in its info part', () => {
    for (const p of PORTS) {
      assert.equal(staticAbiFacts(p.name), undefined, p.name);
      const f = abiFactsFor(p.name)!;
      assert.deepEqual(f, abiFactsFromArchOps(p), p.name);
      for (const alias of p.aliases) assert.equal(canonicalArchName(alias), p.name, alias);
    }
    assert.ok(abiFactsArches().length > 0);
  });

  test('arches without an emulated CPU answer from their port\'s info part or from the table', () => {
    const a = abiFactsFor('aarch64')!;
    assert.deepEqual([a.source, a.charSigned, a.argRegs.slice(0, 2), a.retReg, a.pcReg, a.optprobes], ['archOps', false, ['x0', 'x1'], 'x0', 'pc', false]);
    const r = abiFactsFor('riscv64')!;
    assert.deepEqual([r.charSigned, r.argRegs[0], r.retReg, r.pcReg, r.spReg, r.optprobes], [false, 'a0', 'a0', 'epc', 'sp', false]);
    assert.deepEqual(abiFactsFor('riscv32')!.argRegs, r.argRegs);
    const i = abiFactsFor('i386')!;
    assert.deepEqual([i.charSigned, i.argRegs, i.pcReg, i.optprobes], [true, ['ax', 'dx', 'cx'], 'ip', true]);
    const arm = abiFactsFor('arm')!;
    assert.deepEqual([arm.charSigned, arm.argRegs, arm.retReg, arm.pcReg, arm.optprobes], [false, ['r0', 'r1', 'r2', 'r3'], 'r0', 'pc', true]);
    assert.equal(abiFactsFor('em9999'), undefined);
    assert.equal(abiFactsFor(''), undefined);
  });

  test('aliases name the same arch', () => {
    assert.equal(canonicalArchName('AMD64'), 'x86_64');
    assert.equal(canonicalArchName('arm64'), 'aarch64');
    assert.equal(abiFactsFor('x86-64')?.arch, 'x86_64');
    assert.equal(abiFactsFor('arm64')?.arch, 'aarch64');
    assert.equal(abiFactsFor('i686')?.arch, 'i386');
  });

  test('register names alone identify the arch', () => {
    assert.equal(abiFactsForRegs(X86_REGS)?.arch, 'x86_64');
    assert.equal(abiFactsForRegs(AARCH64_REGS)?.arch, 'aarch64');
    assert.equal(abiFactsForRegs(RISCV_REGS)?.arch, 'riscv64');
    assert.equal(abiFactsForRegs(['foo', 'bar']), undefined);
    assert.equal(abiFactsForRegs([]), undefined);
  });
});

describe('the handler language uses the ABI facts', () => {
  test('defaultArgRegs: by arch name, else by the register names', () => {
    assert.deepEqual(defaultArgRegs(X86_REGS), ['di', 'si', 'dx', 'cx', 'r8', 'r9']);
    assert.deepEqual(defaultArgRegs(X86_REGS, 'x86_64'), ['di', 'si', 'dx', 'cx', 'r8', 'r9']);
    assert.deepEqual(defaultArgRegs(AARCH64_REGS), ['x0', 'x1', 'x2', 'x3', 'x4', 'x5', 'x6', 'x7']);
    assert.deepEqual(defaultArgRegs(RISCV_REGS, 'riscv64').slice(0, 6), ['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
    // registers missing from regNames: unknown rather than wrong
    assert.deepEqual(defaultArgRegs([], 'aarch64'), []);
    assert.deepEqual(defaultArgRegs(X86_REGS, 'aarch64'), []);
    assert.deepEqual(defaultArgRegs(['foo']), []);
    assert.equal(pcRegOf(X86_REGS), 'ip');
    assert.equal(pcRegOf(RISCV_REGS, 'riscv64'), 'epc');
    assert.equal(pcRegOf(['foo']), undefined);
  });

  test('arg0..arg5 read the arch\'s argument registers', () => {
    const env = new FakeEnv();
    for (const [i, r] of ['x0', 'x1', 'x2', 'x3', 'x4', 'x5'].entries()) env.regs.set(r, BigInt(i + 10));
    env.regs.set('a0', 77n);
    const arm = compileHandler('printk("%lu %lu", arg0, arg5);', 'pre', { regNames: AARCH64_REGS, arch: 'aarch64' });
    assert.deepEqual(arm.diagnostics, []);
    arm.handler!.run(env);
    const rv = compileLogMessage('a0={arg0}', { regNames: RISCV_REGS, arch: 'riscv64' });
    assert.deepEqual(rv.diagnostics, []);
    rv.handler!.run(env);
    assert.equal(env.text, '10 15a0=77\n');
    // an arch whose argument registers are unknown: arg0 is an error naming why
    const unknown = compileHandler('return arg0;', 'pre', { regNames: ['r0'], arch: 'em9999' });
    assert.match(unknown.diagnostics[0]?.message ?? '', /argument registers of this architecture are unknown/);
  });

  test('plain char signedness: the option wins, else the arch, else signed', () => {
    const src = 'char c = 200; return c;';
    const run = (o: { arch?: string; charSigned?: boolean }): bigint => compileHandler(src, 'pre', { regNames: X86_REGS, ...o }).handler!.run(new FakeEnv());
    assert.equal(run({}), -56n);
    assert.equal(run({ arch: 'x86_64' }), -56n);
    assert.equal(run({ arch: 'aarch64' }), 200n);
    assert.equal(run({ arch: 'riscv64' }), 200n);
    assert.equal(run({ arch: 'aarch64', charSigned: true }), -56n);
    assert.equal(run({ arch: 'x86_64', charSigned: false }), 200n);
    assert.equal(run({ arch: 'em9999' }), -56n);
  });
});

