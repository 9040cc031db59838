/**
 * A native entry in the x86_64 front end (emulator/arch/x86_64/jit.ts):
 * the frame the translator writes before the entry's int3 is the layout
 * the CPU was handed with its inline breakpoint (X86Cpu.nativeSave), for
 * the route the owner answers (InterpCpu.nativeEntryAt); without a layout
 * the int3 is left to its executor. The x86 kprobes hooks hand the layout
 * over with the inline breakpoint and take it back with it.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { IrBuilder, type IrOp } from '../../emulator/jit/ir';
import { x86FrontEnd } from '../../emulator/arch/x86_64/jit';
import { decodeInsn } from '../../emulator/arch/x86_64/decoder';
import type { Insn } from '../../emulator/arch/x86_64/insn';
import { X86Cpu, type NativeEntrySave } from '../../emulator/arch/x86_64/cpu';
import type { NativeEntryRoute } from '../../emulator/cpu/interp';
import { Memory } from '../../emulator/memory/memory';
import { kprobesArchFor } from '../../emulator/arch/registry';
import { NATIVE_ENTRY_SAVE } from '../../emulator/arch/x86_64/kprobes/opt';

const ENTRY = 0x401000;
/** a layout unlike the kprobes templates' (other constants, another resume): the front end must use the CPU's */
const LAYOUT: NativeEntrySave = {
  frameBytes: { optprobe: 21 * 8, kretprobe: 20 * 8 },
  gprs: Array.from({ length: 15 }, (_, s) => 14 - s),
  origAx: 15 * 8, ip: 16 * 8, cs: 17 * 8, flags: 18 * 8, sp: 19 * 8, ss: 20 * 8,
  kernelCs: 0x77, kernelDs: 0x55, optResume: 0x40,
};

function cpuWith(kind: 'optprobe' | 'kretprobe', save: NativeEntrySave | null): X86Cpu {
  const cpu = new X86Cpu(0, new Memory());
  const route: NativeEntryRoute<X86Cpu> = { kind, ip: ENTRY + 1, hit: () => true, handler: () => true };
  cpu.nativeEntryAt = at => (at === ENTRY ? route : null);
  cpu.nativeSave = save;
  return cpu;
}

/** the IR the front end emits for an int3 at ENTRY on `cpu`, and whether it emitted it itself */
function emitInt3(cpu: X86Cpu): { emitted: boolean; b: IrBuilder<Insn> } {
  const insn = decodeInsn(() => 0xcc, ENTRY) as Insn;
  const b = new IrBuilder<Insn>(ENTRY);
  b.begin(insn, insn.addr, insn.next);
  return { emitted: x86FrontEnd.emit(b, insn, cpu), b };
}

/** the constant a temp was made from (undefined: not a constant) */
function constOf(ops: readonly IrOp[], t: number): bigint | undefined {
  for (const op of ops) if (op.k === 'const' && op.d === t) return op.v;
  return undefined;
}

describe('x86_64 front end: native entries', () => {
  for (const kind of ['optprobe', 'kretprobe'] as const) {
    test(`${kind}: the frame written is the CPU's layout (slot count, ip, cs, ss, orig_ax)`, () => {
      const { emitted, b } = emitInt3(cpuWith(kind, LAYOUT));
      assert.equal(emitted, true);
      const stm = b.ops.find(o => o.k === 'stm');
      assert.ok(stm !== undefined && stm.k === 'stm', 'one multi-store');
      assert.equal(stm.vs.length * 8, LAYOUT.frameBytes[kind]);
      const at = (off: number): bigint | undefined => constOf(b.ops, stm.vs[off / 8]);
      assert.equal(at(LAYOUT.ip), BigInt(ENTRY + 1));
      assert.equal(at(LAYOUT.cs), BigInt(LAYOUT.kernelCs));
      assert.equal(at(LAYOUT.origAx), -1n);
      if (kind === 'optprobe') {
        assert.equal(at(LAYOUT.ss), BigInt(LAYOUT.kernelDs));
        assert.deepEqual(b.ops.at(-1), { k: 'jmp', pc: ENTRY + LAYOUT.optResume });
      } else {
        assert.deepEqual(b.ops.at(-1), { k: 'fall' });
      }
    });
  }

  test('no layout handed in: the int3 is left to its executor, no frame written', () => {
    const { emitted, b } = emitInt3(cpuWith('optprobe', null));
    assert.equal(emitted, false);
    assert.equal(b.ops.some(o => o.k === 'stm'), false);
  });

  test('the x86 kprobes hooks hand the layout over with the inline breakpoint and take it back with it', () => {
    const hooks = kprobesArchFor('x86_64');
    assert.ok(hooks?.installInlineBreakpoint);
    const cpu = new X86Cpu(0, new Memory());
    assert.equal(cpu.nativeSave, null);
    assert.equal(hooks.installInlineBreakpoint(cpu, () => false), cpu);
    assert.equal(cpu.nativeSave, NATIVE_ENTRY_SAVE);
    hooks.installInlineBreakpoint(cpu, null);
    assert.equal(cpu.nativeSave, null);
    assert.equal(cpu.inlineBreakpoint, null);
  });
});
