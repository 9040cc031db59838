/**
 * The instruction decoders as a bundle of their own (dist/decoders.js),
 * loaded on demand by the language server, whose own bundle holds no CPU or
 * decoder (test/structure/layering.test.ts): the probe-file check "this
 * kprobe address is inside an instruction" (a breakpoint there would split
 * it) decodes the image's function from its start, as the probe manager does
 * at registration (./insnBoundary.ts).
 */
import type { ElfImage } from '../elf/types';
import { splitInstruction } from './insnBoundary';
import { archByName } from './registry';

/**
 * 'do_fork+0x3 is inside "mov rbp, rsp" (do_fork+0x1..+0x4)' when addr
 * splits an instruction of the image; undefined on a boundary, or when the
 * image's arch has no decoder or the bytes cannot be decoded.
 */
export function instructionSplitMessage(image: ElfImage, addr: bigint): string | undefined {
  const arch = archByName(image.archName);
  if (!arch) return undefined;
  return splitInstruction(image, arch, addr)?.message;
}
