/**
 * The shared out-of-line step through a slot ending in a step breakpoint
 * (emulator/kprobes/singlestep.ts, arm64's and riscv's kprobes): the slot
 * holds the original instruction and the breakpoint; the step runs the
 * slot, goes on after the probed instruction, and a fault in the copy is
 * the probe's; a simulated probe has no slot to run or give back.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Memory } from '../../emulator/memory/memory';
import { archByName } from '../../emulator/arch/registry';
import { PtRegs } from '../../emulator/kprobes/ptRegs';
import type { KprobesArchContext } from '../../emulator/kprobes/archHooks';
import type { Kprobe } from '../../emulator/kprobes';
import { prepareSlot, removeSlot, resumeAfterSlot, setupSlotSinglestep, slotSinglestepFault } from '../../emulator/kprobes/singlestep';

const SLOT = 0xffffffffc0002000n;
const PROBE = 0xffffffff81000124n;

/** a context whose slot allocator hands out SLOT and records writes and frees */
function context(): { ctx: KprobesArchContext; writes: [bigint, number[]][]; freed: bigint[] } {
  const writes: [bigint, number[]][] = [], freed: bigint[] = [];
  const slots = { get: () => SLOT, put: (a: bigint) => { freed.push(a); }, write: (a: bigint, b: Uint8Array) => { writes.push([a, [...b]]); } };
  return { ctx: { slots } as unknown as KprobesArchContext, writes, freed };
}

for (const [arch, insn, brk] of [
  ['aarch64', [0xe0, 0x03, 0x01, 0xaa], [0xc0, 0x00, 0x20, 0xd4]],
  ['riscv64', [0x05, 0x45], [0x73, 0x00, 0x10, 0x00]],
] as const) describe(`slot single-step (${arch})`, () => {
  const regsOf = (): PtRegs => {
    const ops = archByName(arch);
    assert.ok(ops);
    return new PtRegs(ops.createCpu(0, new Memory()), ops);
  };

  test('the slot holds the instruction then the step breakpoint; the step runs it and goes on after the probed instruction', () => {
    const { ctx, writes, freed } = context();
    const p: Kprobe = { addr: PROBE };
    prepareSlot(ctx, p, Uint8Array.from(insn), Uint8Array.from(brk));
    assert.deepEqual(writes, [[SLOT, [...insn, ...brk]]]);
    assert.equal(p.ainsn?.mode, 'slot');
    assert.equal(p.ainsn?.insn, SLOT);
    assert.equal(p.ainsn?.length, insn.length);
    const regs = regsOf();
    regs.ip = PROBE;
    setupSlotSinglestep(ctx, p, regs);
    assert.equal(regs.ip, SLOT);
    resumeAfterSlot(ctx, p, regs);
    assert.equal(regs.ip, PROBE + BigInt(insn.length));
    regs.ip = SLOT;
    slotSinglestepFault(ctx, p, regs);
    assert.equal(regs.ip, PROBE);
    removeSlot(ctx, p);
    assert.deepEqual(freed, [SLOT]);
  });

  test('a simulated probe: no resume (the simulation set the pc), no slot to free', () => {
    const { ctx, freed } = context();
    const p: Kprobe = { addr: PROBE, ainsn: { insn: 0n, length: insn.length, mode: 'simulate', arch: {}, boostable: -1 } };
    const regs = regsOf();
    regs.ip = 0xffffffff81000400n;
    resumeAfterSlot(ctx, p, regs);
    assert.equal(regs.ip, 0xffffffff81000400n);
    removeSlot(ctx, p);
    assert.deepEqual(freed, []);
  });
});
