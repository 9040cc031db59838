/**
 * aarch64 self-hosted debug registers (Arm ARM D2, "Breakpoint exceptions"
 * and "Watchpoint exceptions"): MRS/MSR of DBGBVR/DBGBCR, DBGWVR/DBGWCR,
 * MDSCR_EL1 and ID_AA64DFR0_EL1 at EL1 and EL0; DBGWCR decoding (E, PAC,
 * LSC, BAS including non-contiguous selections, MASK ranges) and DBGBCR
 * (E, PMC, BAS, BT); watchpoints as faults BEFORE the access (memory and
 * registers unchanged, pc = the instruction, addr = the accessed address);
 * execute breakpoints before the instruction; pairs and vector accesses;
 * the enables (MDSCR_EL1.MDE / KDE, PSTATE.D, PMC); determinism; and the
 * port's hw_breakpoint hooks.
 *
 * Encodings are llvm-mc's (-triple=aarch64 -mattr=+lse).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { a64Machine, A64Machine, getX, setX, CODE, DATA } from '../../fixtures/a64/harness';
import { port } from '../../../emulator/arch/aarch64/index';
import type { A64Cpu } from '../../../emulator/arch/aarch64/cpu';
import { a64ReadSysreg, a64WriteSysreg } from '../../../emulator/arch/aarch64/exec/system';
import { ID_AA64DFR0_EL1 } from '../../../emulator/arch/aarch64/debugRegs';
import type { Trap } from '../../../emulator/arch/types';

const PC = BigInt(CODE);

// ---------------------------------------------------------------- encodings
/** MSR (l = 0) / MRS (l = 1) of the system register op0:op1:CRn:CRm:op2 with Xt = rt */
function sysWord(l: number, [op0, op1, crn, crm, op2]: readonly number[], rt: number): number {
  return (0xd5000000 | (l << 21) | (1 << 20) | ((op0 & 1) << 19) | (op1 << 16) | (crn << 12) | (crm << 8) | (op2 << 5) | rt) >>> 0;
}
const ENC: Record<string, readonly number[]> = { MDSCR_EL1: [2, 0, 0, 2, 2], ID_AA64DFR0_EL1: [3, 0, 0, 5, 0] };
for (let n = 0; n < 16; n++) {
  ENC[`DBGBVR${n}_EL1`] = [2, 0, 0, n, 4]; ENC[`DBGBCR${n}_EL1`] = [2, 0, 0, n, 5];
  ENC[`DBGWVR${n}_EL1`] = [2, 0, 0, n, 6]; ENC[`DBGWCR${n}_EL1`] = [2, 0, 0, n, 7];
}
const msrW = (name: string, rt: number): number => sysWord(0, ENC[name], rt);
const mrsW = (name: string, rt: number): number => sysWord(1, ENC[name], rt);

const WFI = 0xd503207f, SVC0 = 0xd4000001, NOP = 0xd503201f, ISB = 0xd5033fdf;
const ADD_X9_1 = 0x91000529; // add x9, x9, #1
const LDR_X0 = 0xf9400020, STR_X2 = 0xf9000022; // ldr x0, [x1] / str x2, [x1]
const LDRB = 0x39400020, STRB = 0x39000022, LDRH = 0x79400020, STRH = 0x79000022, LDR_W0 = 0xb9400020, STR_W2 = 0xb9000022;
const STUR_X2_3 = 0xf8003022; // stur x2, [x1, #3]
const STR_X2_POST8 = 0xf8008422; // str x2, [x1], #8
const LDP_X = 0xa9400c22, STP_X = 0xa9000c22; // ldp/stp x2, x3, [x1]
const STP_W = 0x29000c22; // stp w2, w3, [x1]
const LDXR = 0xc85f7c20, STXR = 0xc8047c22; // ldxr x0, [x1] / stxr w4, x2, [x1]
const STP_Q = 0xad000420, ST1_2 = 0x4c00a020; // stp q0, q1, [x1] / st1 { v0.16b, v1.16b }, [x1]
const LDADD = 0xf8220020; // ldadd x2, x0, [x1]
const DAIFSET_D = 0xd50348df, DAIFCLR_D = 0xd50348ff; // msr daifset, #8 / msr daifclr, #8

// ---------------------------------------------------------------- register fields
const E = 1, PMC_EL1 = 1 << 1, PMC_EL0 = 2 << 1, PMC_BOTH = 3 << 1;
const LSC_LOAD = 1 << 3, LSC_STORE = 2 << 3, LSC_BOTH = 3 << 3;
const BAS = (b: number): number => b << 5;
const MASK = (m: number): number => m << 24;
const MDE = 1 << 15, KDE = 1 << 13;
const WATCH0 = 1 << 16;

/** MSR at EL1 through the instruction's own path */
function msr(cpu: A64Cpu, name: string, v: number | bigint): void {
  assert.ok(a64WriteSysreg(cpu, name, BigInt(v)), `${name} is writable`);
}
/** a watchpoint pair: DBGWVRn = addr, DBGWCRn = ctrl */
function watch(cpu: A64Cpu, n: number, addr: number, ctrl: number): void {
  msr(cpu, `DBGWVR${n}_EL1`, BigInt(addr));
  msr(cpu, `DBGWCR${n}_EL1`, ctrl);
}
/** an EL1 machine with kernel-mode debug enabled (MDE, KDE, PSTATE.D clear); x1 = the watched area */
function el1(words: readonly number[]): A64Machine {
  const m = a64Machine(words);
  m.cpu.daif = 0;
  msr(m.cpu, 'MDSCR_EL1', MDE | KDE);
  setX(m.cpu, 'x1', BigInt(DATA + 0x40));
  return m;
}
function el0(words: readonly number[]): A64Machine {
  const m = a64Machine(words, { user: true });
  m.cpu.daif = 0;
  msr(m.cpu, 'MDSCR_EL1', MDE);
  setX(m.cpu, 'x1', BigInt(DATA + 0x40));
  return m;
}
/** user-accessible memory, the CPU at EL1 with kernel-mode debug enabled (tests that change EL between runs) */
function el1OverUser(words: readonly number[]): A64Machine {
  const m = el0(words);
  m.cpu.userMode = false;
  msr(m.cpu, 'MDSCR_EL1', MDE | KDE);
  return m;
}
function hwTrap(t: Trap | null): Extract<Trap, { kind: 'hwBreakpoint' }> {
  assert.ok(t && t.kind === 'hwBreakpoint', `expected a hwBreakpoint trap, got ${JSON.stringify(t, (_k, v) => typeof v === 'bigint' ? `0x${v.toString(16)}` : v)}`);
  return t;
}
const FILL = 0xa5;
function fill(m: A64Machine, len = 0x40): void { m.mem.writeBytes(DATA + 0x40, new Uint8Array(len).fill(FILL)); }
function bytesAt(m: A64Machine, a: number, n: number): number[] { return Array.from(m.mem.readBytes(a, n)); }

describe('aarch64 debug system registers', () => {
  test('the MSR/MRS encodings are llvm-mc\'s', () => {
    assert.equal(msrW('DBGBVR0_EL1', 0), 0xd5100080);
    assert.equal(mrsW('DBGBVR0_EL1', 1), 0xd5300081);
    assert.equal(msrW('DBGBCR5_EL1', 2), 0xd51005a2);
    assert.equal(msrW('DBGWVR3_EL1', 3), 0xd51003c3);
    assert.equal(msrW('DBGWCR3_EL1', 4), 0xd51003e4);
    assert.equal(mrsW('DBGWCR0_EL1', 5), 0xd53000e5);
    assert.equal(msrW('MDSCR_EL1', 6), 0xd5100246);
    assert.equal(mrsW('MDSCR_EL1', 7), 0xd5300247);
    assert.equal(mrsW('ID_AA64DFR0_EL1', 8), 0xd5380508);
  });

  test('ID_AA64DFR0_EL1 advertises 6 breakpoint and 4 watchpoint pairs, Armv8 debug', () => {
    const m = el1([mrsW('ID_AA64DFR0_EL1', 8), WFI]);
    assert.equal(m.cpu.run(5).trap?.kind, 'halt');
    const v = getX(m.cpu, 'x8');
    assert.equal(v, ID_AA64DFR0_EL1);
    assert.equal(v & 0xfn, 6n, 'DebugVer = Armv8.0');
    assert.equal(((v >> 12n) & 0xfn) + 1n, 6n, 'BRPs + 1');
    assert.equal(((v >> 20n) & 0xfn) + 1n, 4n, 'WRPs + 1');
    assert.deepEqual(port.hwDebug?.pools, { exec: 6, data: 4 });
  });

  test('MSR then MRS reads back every pair and MDSCR_EL1 (RES0 bits dropped)', () => {
    const cases: [string, bigint, bigint][] = [];
    for (let n = 0; n < 6; n++) {
      cases.push([`DBGBVR${n}_EL1`, 0xffff800012345677n + BigInt(n * 0x100), (0xffff800012345677n + BigInt(n * 0x100)) & ~3n]);
      cases.push([`DBGBCR${n}_EL1`, 0xffffffff_ffffffffn, 0x00ffe1e7n]);
    }
    for (let n = 0; n < 4; n++) {
      cases.push([`DBGWVR${n}_EL1`, 0x600047n + BigInt(n), (0x600047n + BigInt(n)) & ~3n]);
      cases.push([`DBGWCR${n}_EL1`, 0xffffffff_ffffffffn, 0x1f1fffffn]);
    }
    cases.push(['MDSCR_EL1', 0xffffffffn, BigInt(MDE | KDE | (1 << 12) | 1)]);
    for (const [name, v, back] of cases) {
      const m = el1([msrW(name, 0), mrsW(name, 3), WFI]);
      m.cpu.daif = 0xf; // keep the all-ones controls from arming anything that matters
      setX(m.cpu, 'x0', v);
      assert.equal(m.cpu.run(5).trap?.kind, 'halt', name);
      assert.equal(getX(m.cpu, 'x3'), back, name);
      assert.equal(a64ReadSysreg(m.cpu, name), back, `${name} through the hooks' path`);
    }
  });

  test('ID_AA64DFR0_EL1 is read-only; pairs past the advertised counts do not exist', () => {
    const ro = el1([sysWord(0, ENC.ID_AA64DFR0_EL1, 0), WFI]);
    assert.deepEqual(ro.cpu.run(5), { executed: 0, trap: { kind: 'undefined', pc: PC } });
    for (const name of ['DBGBVR6_EL1', 'DBGBCR6_EL1', 'DBGWVR4_EL1', 'DBGWCR4_EL1']) {
      assert.equal(el1([mrsW(name, 0), WFI]).cpu.run(5).trap?.kind, 'undefined', name);
      assert.equal(el1([msrW(name, 0), WFI]).cpu.run(5).trap?.kind, 'undefined', name);
    }
  });

  test('from EL0 every debug register is UNDEFINED, read or written', () => {
    const names = ['DBGBVR0_EL1', 'DBGBCR5_EL1', 'DBGWVR0_EL1', 'DBGWCR3_EL1', 'MDSCR_EL1', 'ID_AA64DFR0_EL1'];
    for (const name of names) {
      for (const w of [mrsW(name, 0), sysWord(0, ENC[name], 0)]) {
        const m = el0([w, SVC0]);
        assert.deepEqual(m.cpu.run(5), { executed: 0, trap: { kind: 'undefined', pc: PC } }, name);
      }
    }
    // the registers are unchanged by the refused MSR
    const m = el0([msrW('DBGWCR0_EL1', 0), SVC0]);
    setX(m.cpu, 'x0', 0xffn);
    m.cpu.run(5);
    assert.equal(a64ReadSysreg(m.cpu, 'DBGWCR0_EL1'), 0n);
  });
});

describe('aarch64 watchpoints: BAS, LSC, timing', () => {
  // (bytes, offset in the doubleword) selections of 1, 2, 4 and 8 bytes
  for (const [len, off] of [[1, 5], [2, 2], [4, 4], [8, 0]] as const) {
    test(`BAS selects ${len} byte(s) at +${off}: a byte store hits exactly those bytes, before memory changes`, () => {
      const base = DATA + 0x40;
      for (let b = -1; b <= 8; b++) {
        const m = el1([STRB, WFI]);
        fill(m);
        watch(m.cpu, 0, base, E | PMC_EL1 | LSC_STORE | BAS(((1 << len) - 1) << off));
        setX(m.cpu, 'x1', BigInt(base + b)); setX(m.cpu, 'x2', 0x5an);
        const r = m.cpu.run(5);
        if (b >= off && b < off + len) {
          assert.equal(r.executed, 0, `byte +${b}`);
          const t = hwTrap(r.trap);
          assert.deepEqual(t, { kind: 'hwBreakpoint', pc: PC, hits: WATCH0, addr: BigInt(base + b), access: 'write' });
          assert.equal(m.mem.read8(base + b), FILL, 'the store did not happen');
          assert.equal(m.cpu.getPc(), PC, 'the pc stays at the store');
        } else {
          assert.equal(r.trap?.kind, 'halt', `byte +${b} is not selected`);
          assert.equal(m.mem.read8(base + b), 0x5a);
        }
      }
    });
  }

  test('LSC: load (01), store (10), both (11) against a load and a store of the watched bytes', () => {
    for (const [lsc, loads, stores] of [[LSC_LOAD, true, false], [LSC_STORE, false, true], [LSC_BOTH, true, true]] as const) {
      for (const [word, isLoad] of [[LDR_X0, true], [STR_X2, false]] as const) {
        const m = el1([word, WFI]);
        fill(m);
        watch(m.cpu, 1, DATA + 0x40, E | PMC_EL1 | lsc | BAS(0x0f));
        setX(m.cpu, 'x0', 0x1111n); setX(m.cpu, 'x2', 0x2222n);
        const r = m.cpu.run(5);
        const should = isLoad ? loads : stores;
        if (should) {
          assert.deepEqual(r.trap, { kind: 'hwBreakpoint', pc: PC, hits: WATCH0 << 1, addr: BigInt(DATA + 0x40), access: isLoad ? 'read' : 'write' });
          assert.equal(getX(m.cpu, 'x0'), 0x1111n, 'a load that hit wrote no register');
          assert.deepEqual(bytesAt(m, DATA + 0x40, 8), new Array(8).fill(FILL));
        } else {
          assert.equal(r.trap?.kind, 'halt', `lsc ${lsc >> 3} ${isLoad ? 'load' : 'store'}`);
        }
      }
    }
  });

  test('accesses of 1, 2, 4, 8 bytes overlapping the watched word partially hit; neighbours do not', () => {
    const base = DATA + 0x40;
    // bytes 4..7 of the doubleword watched
    const cases: [number, number, boolean][] = [
      [STRB, 3, false], [STRB, 4, true], [STRB, 7, true], [STRB, 8, false],
      [STRH, 2, false], [STRH, 3, true], [STRH, 7, true], [STRH, 8, false],
      [STR_W2, 0, false], [STR_W2, 1, true], [STR_W2, 4, true], [STR_W2, 7, true], [STR_W2, 8, false],
      [STR_X2, 0, true], [STR_X2, 8, false], [STR_X2, -4, false], [STR_X2, -3, true],
      [STUR_X2_3, -7, false], [STUR_X2_3, -6, true], [STUR_X2_3, 4, true], [STUR_X2_3, 5, false],
    ];
    for (const [word, at, hit] of cases) {
      const m = el1([word, WFI]);
      fill(m); m.mem.writeBytes(DATA + 0x30, new Uint8Array(0x10).fill(FILL));
      watch(m.cpu, 0, base, E | PMC_EL1 | LSC_STORE | BAS(0xf0));
      setX(m.cpu, 'x1', BigInt(base + at)); setX(m.cpu, 'x2', 0x0102030405060708n);
      const r = m.cpu.run(5);
      const what = `${word.toString(16)} at +${at}`;
      if (hit) {
        const off = word === STUR_X2_3 ? 3 : 0;
        assert.deepEqual(r.trap, { kind: 'hwBreakpoint', pc: PC, hits: WATCH0, addr: BigInt(base + at + off), access: 'write' }, what);
        assert.deepEqual(bytesAt(m, DATA + 0x30, 0x20), new Array(0x20).fill(FILL), `${what}: no byte written`);
      } else assert.equal(r.trap?.kind, 'halt', what);
    }
  });

  test('loads of 1, 2, 4 bytes: the trap names the load and its address; the register is untouched', () => {
    const base = DATA + 0x40;
    for (const [word, at] of [[LDRB, 6], [LDRH, 6], [LDR_W0, 4]] as const) {
      const m = el1([word, WFI]);
      fill(m);
      watch(m.cpu, 2, base, E | PMC_EL1 | LSC_LOAD | BAS(0x40));
      setX(m.cpu, 'x1', BigInt(base + at)); setX(m.cpu, 'x0', 77n);
      assert.deepEqual(m.cpu.run(5).trap, { kind: 'hwBreakpoint', pc: PC, hits: WATCH0 << 2, addr: BigInt(base + at), access: 'read' });
      assert.equal(getX(m.cpu, 'x0'), 77n);
    }
  });

  test('a non-contiguous BAS watches exactly the selected bytes', () => {
    const base = DATA + 0x40;
    const bas = 0b10100101; // bytes 0, 2, 5, 7
    for (let b = 0; b < 8; b++) {
      const m = el1([STRB, WFI]);
      watch(m.cpu, 0, base, E | PMC_EL1 | LSC_STORE | BAS(bas));
      setX(m.cpu, 'x1', BigInt(base + b));
      assert.equal(m.cpu.run(5).trap?.kind, (bas >> b) & 1 ? 'hwBreakpoint' : 'halt', `byte ${b}`);
    }
    const slot = el1([WFI]);
    watch(slot.cpu, 0, base, E | PMC_EL1 | LSC_STORE | BAS(bas));
    const s = slot.cpu.hw.slot(16);
    assert.ok(s);
    assert.deepEqual({ lo: s.lo, len: s.len, byteMask: s.byteMask }, { lo: base, len: 8, byteMask: bas });
    // a halfword over bytes 3-4 (both unselected) passes; over bytes 1-2 (2 selected) hits
    for (const [at, hit] of [[3, false], [1, true], [6, true]] as const) {
      const m = el1([STRH, WFI]);
      watch(m.cpu, 0, base, E | PMC_EL1 | LSC_STORE | BAS(bas));
      setX(m.cpu, 'x1', BigInt(base + at));
      assert.equal(m.cpu.run(5).trap?.kind, hit ? 'hwBreakpoint' : 'halt', `halfword at +${at}`);
    }
  });

  test('DBGWVR[2] = 1 (word-aligned, deprecated): BAS[3:0] select bytes of that word, BAS[7:4] are ignored', () => {
    const base = DATA + 0x44;
    for (let b = -4; b < 8; b++) {
      const m = el1([STRB, WFI]);
      watch(m.cpu, 0, base, E | PMC_EL1 | LSC_STORE | BAS(0xf3)); // bytes 0, 1 of the word (+ ignored high nibble)
      setX(m.cpu, 'x1', BigInt(base + b));
      assert.equal(m.cpu.run(5).trap?.kind, b === 0 || b === 1 ? 'hwBreakpoint' : 'halt', `byte ${b}`);
    }
  });

  test('the trap comes before the access: post-index writeback, memory and registers unchanged; restart after disable + step', () => {
    const m = el1([NOP, STR_X2_POST8, ADD_X9_1, WFI]);
    fill(m);
    watch(m.cpu, 3, DATA + 0x40, E | PMC_EL1 | LSC_STORE | BAS(0x01));
    setX(m.cpu, 'x2', 0x1122334455667788n);
    const r = m.cpu.run(10);
    assert.equal(r.executed, 1);
    assert.deepEqual(r.trap, { kind: 'hwBreakpoint', pc: PC + 4n, hits: WATCH0 << 3, addr: BigInt(DATA + 0x40), access: 'write' });
    assert.equal(getX(m.cpu, 'x1'), BigInt(DATA + 0x40), 'no writeback');
    assert.deepEqual(bytesAt(m, DATA + 0x40, 8), new Array(8).fill(FILL));
    assert.equal(m.cpu.getPc(), PC + 4n);
    // Linux's flow: disable the watchpoint, single-step the instruction, re-enable
    msr(m.cpu, 'DBGWCR3_EL1', (E | PMC_EL1 | LSC_STORE | BAS(0x01)) & ~E);
    m.cpu.stepTrap = true;
    assert.deepEqual(m.cpu.run(1).trap, { kind: 'singleStep', pc: PC + 8n });
    m.cpu.stepTrap = false;
    msr(m.cpu, 'DBGWCR3_EL1', E | PMC_EL1 | LSC_STORE | BAS(0x01));
    assert.equal(m.mem.read64(DATA + 0x40), 0x1122334455667788n);
    assert.equal(getX(m.cpu, 'x1'), BigInt(DATA + 0x48));
    assert.equal(m.cpu.run(10).trap?.kind, 'halt');
    assert.equal(getX(m.cpu, 'x9'), 1n);
  });

  test('several pairs: hits names every matching watchpoint (bit 16 + n)', () => {
    const m = el1([STR_X2, WFI]);
    watch(m.cpu, 0, DATA + 0x40, E | PMC_EL1 | LSC_STORE | BAS(0x01));
    watch(m.cpu, 2, DATA + 0x40, E | PMC_EL1 | LSC_BOTH | BAS(0x80));
    watch(m.cpu, 3, DATA + 0x40, E | PMC_EL1 | LSC_LOAD | BAS(0xff)); // loads only: not this store
    assert.equal(hwTrap(m.cpu.run(5).trap).hits, WATCH0 | (WATCH0 << 2));
  });
});

describe('aarch64 watchpoints: pairs, vectors, exclusives, MASK ranges', () => {
  test('STP / LDP: a watch on the second element faults before either element moves', () => {
    for (const [word, load, size] of [[STP_X, false, 8], [LDP_X, true, 8], [STP_W, false, 4]] as const) {
      const m = el1([word, WFI]);
      fill(m);
      const second = DATA + 0x40 + size;
      watch(m.cpu, 0, second & ~7, E | PMC_EL1 | (load ? LSC_LOAD : LSC_STORE) | BAS(1 << (second & 7)));
      setX(m.cpu, 'x2', 0x2222n); setX(m.cpu, 'x3', 0x3333n);
      const r = m.cpu.run(5);
      assert.deepEqual(r.trap, { kind: 'hwBreakpoint', pc: PC, hits: WATCH0, addr: BigInt(second), access: load ? 'read' : 'write' }, word.toString(16));
      assert.deepEqual(bytesAt(m, DATA + 0x40, 16), new Array(16).fill(FILL), 'first element not written');
      assert.deepEqual([getX(m.cpu, 'x2'), getX(m.cpu, 'x3')], [0x2222n, 0x3333n], 'no register loaded');
    }
  });

  test('STP of Q registers and ST1 of two registers: nothing stored when the last bytes are watched', () => {
    for (const word of [STP_Q, ST1_2]) {
      const m = el1([word, WFI]);
      fill(m);
      watch(m.cpu, 1, DATA + 0x58, E | PMC_EL1 | LSC_STORE | BAS(0x80)); // byte 31 of the 32 stored
      const r = m.cpu.run(5);
      assert.equal(hwTrap(r.trap).access, 'write', word.toString(16));
      assert.deepEqual(bytesAt(m, DATA + 0x40, 32), new Array(32).fill(FILL), word.toString(16));
    }
  });

  test('STXR: a store watchpoint fires before the store (status untouched); a load watchpoint does not see the monitor check', () => {
    const m = el1([LDXR, STXR, WFI]);
    fill(m);
    watch(m.cpu, 0, DATA + 0x40, E | PMC_EL1 | LSC_STORE | BAS(0xff));
    setX(m.cpu, 'x4', 99n); setX(m.cpu, 'x2', 0x42n);
    const r = m.cpu.run(5);
    assert.deepEqual(r.trap, { kind: 'hwBreakpoint', pc: PC + 4n, hits: WATCH0, addr: BigInt(DATA + 0x40), access: 'write' });
    assert.equal(getX(m.cpu, 'x4'), 99n);
    assert.deepEqual(bytesAt(m, DATA + 0x40, 8), new Array(8).fill(FILL));
    // ldxr before the watch; then the stxr's monitor check reads memory, which no load watchpoint sees
    const n = el1([LDXR, STXR, WFI]);
    fill(n);
    setX(n.cpu, 'x2', 0x42n);
    assert.deepEqual(n.cpu.run(1), { executed: 1, trap: null });
    watch(n.cpu, 0, DATA + 0x40, E | PMC_EL1 | LSC_LOAD | BAS(0xff));
    assert.equal(n.cpu.run(5).trap?.kind, 'halt');
    assert.equal(getX(n.cpu, 'x4'), 0n, 'the exclusive succeeded');
    assert.equal(n.mem.read64(DATA + 0x40), 0x42n);
  });

  test('LDADD reads then writes: a store-only watch faults before the write, the destination unchanged', () => {
    const m = el1([LDADD, WFI]);
    m.mem.write64(DATA + 0x40, 5n);
    watch(m.cpu, 0, DATA + 0x40, E | PMC_EL1 | LSC_STORE | BAS(0xff));
    setX(m.cpu, 'x2', 1n); setX(m.cpu, 'x0', 0xeen);
    assert.deepEqual(m.cpu.run(5).trap, { kind: 'hwBreakpoint', pc: PC, hits: WATCH0, addr: BigInt(DATA + 0x40), access: 'write' });
    assert.equal(m.mem.read64(DATA + 0x40), 5n);
    assert.equal(getX(m.cpu, 'x0'), 0xeen);
  });

  test('MASK watches the 2^MASK-byte block holding DBGWVR; reserved MASK values 1, 2 never match', () => {
    const block = DATA + 0x1000;
    for (const [at, hit] of [[block - 1, false], [block, true], [block + 0x7ff, true], [block + 0xfff, true], [block + 0x1000, false]] as const) {
      const m = el1([STRB, WFI]);
      watch(m.cpu, 0, block + 0x238, E | PMC_EL1 | LSC_BOTH | BAS(0xff) | MASK(12)); // low 12 bits of DBGWVR ignored
      setX(m.cpu, 'x1', BigInt(at));
      const r = m.cpu.run(5);
      if (hit) assert.deepEqual(r.trap, { kind: 'hwBreakpoint', pc: PC, hits: WATCH0, addr: BigInt(at), access: 'write' });
      else assert.equal(r.trap?.kind, 'halt', `0x${at.toString(16)}`);
    }
    const s = el1([WFI]);
    watch(s.cpu, 0, block, E | PMC_EL1 | LSC_BOTH | BAS(0xff) | MASK(31));
    const slot = s.cpu.hw.slot(16);
    assert.ok(slot);
    assert.deepEqual([slot.lo, slot.len], [0, 2 ** 31]);
    for (const mask of [1, 2]) {
      const m = el1([STRB, WFI]);
      watch(m.cpu, 0, DATA + 0x40, E | PMC_EL1 | LSC_BOTH | BAS(0xff) | MASK(mask));
      assert.equal(m.cpu.run(5).trap?.kind, 'halt', `MASK ${mask}`);
    }
    // an 8-byte store straddling the block's start hits (at its own address)
    const m = el1([STR_X2, WFI]);
    watch(m.cpu, 0, block, E | PMC_EL1 | LSC_STORE | BAS(0xff) | MASK(3));
    setX(m.cpu, 'x1', BigInt(block - 4));
    assert.equal(hwTrap(m.cpu.run(5).trap).addr, BigInt(block - 4));
  });
});

describe('aarch64 breakpoints', () => {
  test('an execute breakpoint faults before the instruction; disabled, the run goes on', () => {
    const m = el1([ADD_X9_1, ADD_X9_1, ADD_X9_1, ADD_X9_1, WFI]);
    msr(m.cpu, 'DBGBVR1_EL1', PC + 8n);
    msr(m.cpu, 'DBGBCR1_EL1', E | PMC_EL1 | BAS(0xf));
    const r = m.cpu.run(10);
    assert.deepEqual(r, { executed: 2, trap: { kind: 'hwBreakpoint', pc: PC + 8n, hits: 1 << 1, addr: PC + 8n, access: 'exec' } });
    assert.equal(getX(m.cpu, 'x9'), 2n);
    assert.equal(m.cpu.getPc(), PC + 8n);
    msr(m.cpu, 'DBGBCR1_EL1', PMC_EL1 | BAS(0xf));
    assert.equal(m.cpu.run(10).trap?.kind, 'halt');
    assert.equal(getX(m.cpu, 'x9'), 4n);
  });

  test('the breakpoint is programmed by MSR instructions (ISB between), pc bits [1:0] ignored', () => {
    const m = el1([msrW('DBGBVR0_EL1', 5), msrW('DBGBCR0_EL1', 6), ISB, ADD_X9_1, ADD_X9_1, WFI]);
    setX(m.cpu, 'x5', PC + 16n + 3n); setX(m.cpu, 'x6', BigInt(E | PMC_EL1 | BAS(0xf)));
    const r = m.cpu.run(10);
    assert.deepEqual(r.trap, { kind: 'hwBreakpoint', pc: PC + 16n, hits: 1, addr: PC + 16n, access: 'exec' });
    assert.equal(getX(m.cpu, 'x9'), 1n);
  });

  test('BAS = 0 and breakpoint types other than unlinked address match never fire', () => {
    for (const ctrl of [E | PMC_EL1, E | PMC_EL1 | BAS(0xf) | (1 << 20), E | PMC_EL1 | BAS(0xf) | (2 << 20), E | PMC_EL1 | BAS(0xf) | (4 << 20)]) {
      const m = el1([ADD_X9_1, WFI]);
      msr(m.cpu, 'DBGBVR5_EL1', PC);
      msr(m.cpu, 'DBGBCR5_EL1', ctrl);
      assert.equal(m.cpu.run(5).trap?.kind, 'halt', ctrl.toString(16));
    }
  });

  test('a kernel-address breakpoint (upper VA half) matches there', () => {
    const m = el1([WFI]);
    msr(m.cpu, 'DBGBVR2_EL1', 0xffff800000001000n);
    msr(m.cpu, 'DBGBCR2_EL1', E | PMC_EL1 | BAS(0xf));
    const s = m.cpu.hw.slot(2);
    assert.ok(s);
    assert.deepEqual([s.lo, s.len, s.exec], [-0x800000000000 + 0x1000, 4, true]);
  });
});

describe('aarch64 debug enables: E, MDE, KDE, PSTATE.D, PMC', () => {
  const CTRL = E | PMC_EL1 | LSC_STORE | BAS(0xff);
  test('E = 0: nothing fires (watchpoint or breakpoint)', () => {
    const m = el1([STR_X2, ADD_X9_1, WFI]);
    watch(m.cpu, 0, DATA + 0x40, CTRL & ~E);
    msr(m.cpu, 'DBGBVR0_EL1', PC + 4n); msr(m.cpu, 'DBGBCR0_EL1', PMC_EL1 | BAS(0xf));
    setX(m.cpu, 'x2', 7n);
    assert.deepEqual(m.cpu.run(5), { executed: 3, trap: { kind: 'halt', pc: PC + 12n } });
    assert.equal(m.mem.read64(DATA + 0x40), 7n);
    assert.equal(m.cpu.hw.dataArmed || m.cpu.hw.execArmed, false);
  });

  test('MDSCR_EL1.MDE = 0 or (at EL1) KDE = 0 disable every pair', () => {
    for (const mdscr of [0, KDE, MDE]) {
      const m = el1([STR_X2, WFI]);
      watch(m.cpu, 0, DATA + 0x40, CTRL);
      msr(m.cpu, 'MDSCR_EL1', mdscr);
      assert.equal(m.cpu.run(5).trap?.kind, 'halt', `MDSCR ${mdscr.toString(16)}`);
    }
  });

  test('PSTATE.D masks EL1 watchpoints; msr daifset/daifclr #8 take effect inside the run', () => {
    const m = el1([DAIFSET_D, STR_X2, DAIFCLR_D, STR_X2, WFI]);
    watch(m.cpu, 0, DATA + 0x40, CTRL);
    const r = m.cpu.run(10);
    assert.deepEqual(r, { executed: 3, trap: { kind: 'hwBreakpoint', pc: PC + 12n, hits: WATCH0, addr: BigInt(DATA + 0x40), access: 'write' } });
  });

  test('PMC: an EL1 pair fires at EL1 only, an EL0 pair at EL0 only (MDE alone suffices at EL0), both for 11', () => {
    for (const [pmc, atEl1, atEl0] of [[PMC_EL1, true, false], [PMC_EL0, false, true], [PMC_BOTH, true, true], [0, false, false]] as const) {
      const k = el1([STR_X2, WFI]);
      watch(k.cpu, 0, DATA + 0x40, E | pmc | LSC_STORE | BAS(0xff));
      assert.equal(k.cpu.run(5).trap?.kind, atEl1 ? 'hwBreakpoint' : 'halt', `PMC ${pmc >> 1} at EL1`);
      const u = el0([STR_X2, SVC0]);
      watch(u.cpu, 0, DATA + 0x40, E | pmc | LSC_STORE | BAS(0xff));
      u.cpu.daif = 0xf; // PSTATE.D does not mask EL0 (the debug target is EL1)
      assert.equal(u.cpu.run(5).trap?.kind, atEl0 ? 'hwBreakpoint' : 'syscall', `PMC ${pmc >> 1} at EL0`);
    }
  });

  test('the same CPU switching EL between runs re-decodes its pairs', () => {
    const m = el1OverUser([STR_X2, WFI, STR_X2, SVC0]);
    watch(m.cpu, 0, DATA + 0x40, E | PMC_EL0 | LSC_STORE | BAS(0xff));
    assert.equal(m.cpu.run(5).trap?.kind, 'halt', 'EL1: the EL0 pair is not armed');
    m.cpu.userMode = true;
    m.cpu.setPc(PC + 8n);
    assert.equal(m.cpu.run(5).trap?.kind, 'hwBreakpoint', 'EL0: armed');
  });
});

describe('aarch64 debug registers: determinism', () => {
  test('two runs of the same program stop at the same instruction count', () => {
    // x9 counts to 100, then the watched store
    const prog = [ADD_X9_1, 0xf101913f /* cmp x9, #100 */, 0x54ffffc1 /* b.ne -8 */, STR_X2, WFI];
    const runOnce = (): { instret: number; res: unknown } => {
      const m = el1(prog);
      watch(m.cpu, 0, DATA + 0x40, E | PMC_EL1 | LSC_STORE | BAS(0xff));
      const res = m.cpu.run(1000);
      return { instret: m.cpu.instret, res };
    };
    const a = runOnce(), b = runOnce();
    assert.deepEqual(a, b);
    assert.equal(a.instret, 300);
    assert.deepEqual(a.res, { executed: 300, trap: { kind: 'hwBreakpoint', pc: PC + 12n, hits: WATCH0, addr: BigInt(DATA + 0x40), access: 'write' } });
  });
});

describe('aarch64 hw_breakpoint hooks (port.hwDebug)', () => {
  const hooks = port.hwDebug!;
  test('pools and register names', () => {
    assert.deepEqual(hooks.pools, { exec: 6, data: 4 });
    assert.equal(hooks.registerName('exec', 0), 'DBGBVR0_EL1');
    assert.equal(hooks.registerName('exec', 5), 'DBGBVR5_EL1');
    assert.equal(hooks.registerName('data', 3), 'DBGWVR3_EL1');
    assert.throws(() => hooks.registerName('data', 4), RangeError);
    assert.throws(() => hooks.registerName('exec', 6), RangeError);
  });

  test('validate: 1..8 bytes inside one aligned doubleword, reads-only allowed, execute = one aligned A64 instruction', () => {
    const K = 0xffff800000100000n;
    for (const req of [
      { addr: K, len: 8, type: 'rw' }, { addr: K + 7n, len: 1, type: 'w' }, { addr: K + 4n, len: 4, type: 'r' },
      { addr: K + 2n, len: 6, type: 'w' }, { addr: 0x400000n, len: 4, type: 'x' }, { addr: 0x400000n, len: 8, type: 'x' },
    ] as const) assert.equal(hooks.validate(req), null, JSON.stringify(req, (_k, v) => typeof v === 'bigint' ? v.toString(16) : v));
    const bad = (req: { addr: bigint; len: number; type: 'x' | 'w' | 'r' | 'rw' }, re: RegExp): void => {
      const v = hooks.validate(req);
      assert.ok(v, `${req.type} len ${req.len} at ${req.addr.toString(16)} is refused`);
      assert.equal(v.errno, -22);
      assert.match(v.reason, re);
    };
    bad({ addr: K + 4n, len: 8, type: 'w' }, /doubleword/);
    bad({ addr: K + 7n, len: 2, type: 'rw' }, /doubleword/);
    bad({ addr: K, len: 0, type: 'w' }, /1\.\.8/);
    bad({ addr: K, len: 16, type: 'r' }, /1\.\.8/);
    bad({ addr: 0x400002n, len: 4, type: 'x' }, /aligned/);
    bad({ addr: 0x0001000000000000n, len: 4, type: 'w' }, /canonical/);
  });

  test('install programs the pair through the MSR path (user address: PMC EL0, MDE); a user store hits', () => {
    const m = el0([STRH, SVC0]);
    msr(m.cpu, 'MDSCR_EL1', 0);
    const addr = BigInt(DATA + 0x43);
    hooks.install(m.cpu, 'data', 2, { addr, len: 2, type: 'w' });
    assert.equal(a64ReadSysreg(m.cpu, 'DBGWVR2_EL1'), BigInt(DATA + 0x40));
    assert.equal(a64ReadSysreg(m.cpu, 'DBGWCR2_EL1'), BigInt(BAS(0b11 << 3) | LSC_STORE | PMC_EL0 | E));
    assert.equal(a64ReadSysreg(m.cpu, 'MDSCR_EL1'), BigInt(MDE));
    setX(m.cpu, 'x1', BigInt(DATA + 0x44));
    assert.deepEqual(m.cpu.run(5).trap, { kind: 'hwBreakpoint', pc: PC, hits: WATCH0 << 2, addr: BigInt(DATA + 0x44), access: 'write' });
    assert.deepEqual(hooks.snapshot(m.cpu), [
      { name: 'DBGWVR2_EL1', value: BigInt(DATA + 0x40) },
      { name: 'DBGWCR2_EL1', value: BigInt(BAS(0b11 << 3) | LSC_STORE | PMC_EL0 | E) },
      { name: 'MDSCR_EL1', value: BigInt(MDE) },
    ]);
    hooks.acknowledge(m.cpu);
    hooks.uninstall(m.cpu, 'data', 2);
    assert.equal(a64ReadSysreg(m.cpu, 'DBGWCR2_EL1'), BigInt(BAS(0b11 << 3) | LSC_STORE | PMC_EL0));
    assert.deepEqual(hooks.snapshot(m.cpu), [{ name: 'MDSCR_EL1', value: BigInt(MDE) }]);
    assert.equal(m.cpu.run(5).trap?.kind, 'syscall');
  });

  test('install of a kernel address: PMC EL1 with KDE + MDE; an execute breakpoint on kernel text', () => {
    const m = el1([WFI]);
    msr(m.cpu, 'MDSCR_EL1', 0);
    const K = 0xffff800000200000n;
    hooks.install(m.cpu, 'data', 0, { addr: K + 8n, len: 8, type: 'r' });
    hooks.install(m.cpu, 'exec', 4, { addr: K + 0x40n, len: 4, type: 'x' });
    assert.equal(a64ReadSysreg(m.cpu, 'MDSCR_EL1'), BigInt(MDE | KDE));
    assert.equal(a64ReadSysreg(m.cpu, 'DBGWVR0_EL1'), K + 8n);
    assert.equal(a64ReadSysreg(m.cpu, 'DBGWCR0_EL1'), BigInt(BAS(0xff) | LSC_LOAD | PMC_EL1 | E));
    assert.equal(a64ReadSysreg(m.cpu, 'DBGBVR4_EL1'), K + 0x40n);
    assert.equal(a64ReadSysreg(m.cpu, 'DBGBCR4_EL1'), BigInt(BAS(0xf) | PMC_EL1 | E));
    assert.deepEqual(hooks.snapshot(m.cpu).map(r => r.name), ['DBGBVR4_EL1', 'DBGBCR4_EL1', 'DBGWVR0_EL1', 'DBGWCR0_EL1', 'MDSCR_EL1']);
    assert.throws(() => hooks.install(m.cpu, 'exec', 0, { addr: K, len: 8, type: 'w' }), RangeError);
    assert.throws(() => hooks.install(m.cpu, 'data', 0, { addr: K + 4n, len: 8, type: 'w' }), RangeError);
  });

  test('an execute breakpoint the hooks install at a user address matches EL0 code only', () => {
    const m = el1OverUser([ADD_X9_1, ADD_X9_1, WFI]);
    hooks.install(m.cpu, 'exec', 0, { addr: PC + 4n, len: 4, type: 'x' }); // a user-half address: PMC EL0
    assert.equal(m.cpu.run(5).trap?.kind, 'halt', 'the EL0 pair does not match EL1 code');
    m.cpu.setPc(PC); m.cpu.userMode = true;
    assert.deepEqual(m.cpu.run(5).trap, { kind: 'hwBreakpoint', pc: PC + 4n, hits: 1, addr: PC + 4n, access: 'exec' });
  });
});
