/**
 * Where a stack frame is: a frame with source is named by its function
 * alone, its exact address is its instructionPointerReference. These check
 * that address against the ELF's symbols (the project's own loader), so a
 * test that expected `do_fork+0x6` still pins the instruction.
 */
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage } from '../../emulator/elf/types';
import { KERNEL } from './dapHarness';

const images = new Map<string, ElfImage>();

function imageOf(program: string): ElfImage {
  let img = images.get(program);
  if (!img) images.set(program, img = loadElf(program));
  return img;
}

/** The address of a symbol of an ELF (the example kernel by default). */
export function symbolAddress(name: string, program = KERNEL): bigint {
  const s = imageOf(program).symbols.lookup(name);
  assert.ok(s, `${name} in ${program}`);
  return s.value;
}

/** The frame's exact address (its instructionPointerReference). */
export function framePc(frame: DebugProtocol.StackFrame): bigint {
  assert.ok(frame.instructionPointerReference, `${frame.name} has an instructionPointerReference`);
  return BigInt(frame.instructionPointerReference);
}

/** The frame's offset in symbol `name` (asserting it is inside it, by the ELF's symbol at its address). */
export function frameOffsetIn(frame: DebugProtocol.StackFrame, name: string, program = KERNEL): bigint {
  const pc = framePc(frame);
  const r = imageOf(program).symbols.resolve(pc);
  assert.equal(r?.sym.name, name, `${frame.name} at ${frame.instructionPointerReference}`);
  return r.offset;
}

/** The frame is named `name` (its function) and is at exactly name + offset. */
export function assertFrameAt(frame: DebugProtocol.StackFrame, name: string, offset: bigint, program = KERNEL): void {
  assert.equal(frame.name, name);
  assert.equal(framePc(frame), symbolAddress(name, program) + offset, `${name}+0x${offset.toString(16)}: ${frame.instructionPointerReference}`);
}
