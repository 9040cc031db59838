/**
 * Accesses the emulator makes for the guest, as a data watchpoint sees them
 * (memory/writeSource.ts): the kernel's own writes, copy_to_user, the
 * kprobes engine's pt_regs frames, a handler reading guest memory are
 * recorded and reported at the CPU's next instruction boundary; text_poke,
 * the loader and the debugger are not CPU stores through the watched
 * address and are never seen. Determinism: the report comes before the
 * next instruction, with 0 instructions run.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { machine, setReg, CODE, DATA } from '../fixtures/x86/harness';
import type { WriteSource } from '../../emulator/memory/writeSource';
import { textPoke } from '../../emulator/memory/textPoke';

const WATCHED = DATA + 0x80;

/** a CPU at `nop; nop; hlt` with DR0 watching WATCHED (8 bytes, read/write) */
function armed(): ReturnType<typeof machine> {
  const m = machine('90 90 f4');
  m.cpu.writeDr(0, BigInt(WATCHED));
  m.cpu.writeDr(7, BigInt(2 | ((2 << 2 | 3) << 16))); // G0, R/W 11, LEN 10 (8 bytes)
  return m;
}

for (const [source, seen] of [['kernel', true], ['uaccess', true], ['engine', true], ['loader', false], ['debugger', false]] as [WriteSource, boolean][]) {
  test(`a '${source}' write to the watched bytes is ${seen ? 'reported at the next instruction boundary' : 'not seen (no CPU store through that address)'}`, () => {
    const { cpu, mem } = armed();
    cpu.run(1); // one instruction: the CPU has run on this address space (its watcher is set)
    mem.writeBytes(WATCHED + 4, Uint8Array.of(1, 2), source);
    const r = cpu.run(10);
    if (seen) {
      assert.equal(r.executed, 0, 'before the next instruction');
      assert.ok(r.trap?.kind === 'hwBreakpoint');
      assert.equal(r.trap.hits, 1);
      assert.equal(r.trap.addr, BigInt(WATCHED + 4));
      assert.equal(r.trap.access, 'write');
      assert.equal(r.trap.pc, BigInt(CODE + 1));
      assert.equal(cpu.run(10).trap?.kind, 'halt', 'reported once');
    } else assert.equal(r.trap?.kind, 'halt');
  });
}

test('the engine\'s in-place pt_regs frame words are seen like its other writes', () => {
  const { cpu, mem } = armed();
  cpu.run(1);
  mem.wroteInPlace(WATCHED, 8, 'engine');
  assert.equal(cpu.run(10).trap?.kind, 'hwBreakpoint');
  mem.wroteInPlace(WATCHED + 0x100, 8, 'engine');
  assert.equal(cpu.run(10).trap?.kind, 'halt', 'other bytes: nothing');
});

test('text_poke writes through another mapping: a watch on the text never fires', () => {
  const { cpu, mem } = machine('90 90 f4');
  cpu.writeDr(0, BigInt(CODE + 1));
  cpu.writeDr(7, BigInt(2 | ((0 << 2 | 1) << 16))); // G0, write, 1 byte
  cpu.run(1);
  textPoke(mem, CODE + 1, Uint8Array.of(0x90));
  assert.equal(cpu.run(10).trap?.kind, 'halt');
});

test('a handler reading watched memory between runs (read/write watch): reported, never thrown', () => {
  const { cpu, mem } = armed();
  setReg(cpu, 'rax', 0n);
  cpu.run(1);
  assert.doesNotThrow(() => mem.read64(WATCHED));
  const r = cpu.run(10);
  assert.ok(r.trap?.kind === 'hwBreakpoint');
  assert.equal(r.trap.access, 'read');
});
