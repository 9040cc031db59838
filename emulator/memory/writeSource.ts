/**
 * Who wrote guest memory. Every write to guest RAM goes through Memory
 * (write8..write64 for CPU stores, writeBytes for bulk writes), which
 * tells its write observers (Memory.addWriteObserver) the address, length
 * and source after the bytes have changed. Data watchpoints, code
 * invalidation and snapshots watch that one path.
 *
 * Which of these a hardware data watchpoint (x86 DR0-DR3 / arm64 DBGWVR)
 * on the written virtual address would see:
 *
 *   'cpu'       yes: a store instruction executed by a CPU.
 *   'uaccess'   yes: copy_to_user / put_user and the exec-time stack
 *               set-up (create_elf_tables) are stores done by the CPU in
 *               kernel mode to the user virtual address.
 *   'engine'    yes: the kprobes engine's pt_regs frames written natively
 *               in place of the trampoline template's pushes (and a
 *               jprobe's stack restore, a memcpy in Linux) are the CPU's
 *               stores to the stack.
 *   'kernel'    yes: the emulated kernel writing its own memory as its
 *               code would (memset of a data area, ...), through the
 *               same virtual address. This is the default of writeBytes.
 *   'textPoke'  no: Linux's text_poke() writes through a temporary
 *               mapping (poking_mm / fixmap) at another virtual address,
 *               so a watchpoint on the text address does not fire.
 *   'loader'    no: loading an image or reading a file page in is
 *               DMA-like (firmware, the block layer), not a CPU store.
 *   'debugger'  no: the debugger's writeMemory (ptrace/gdbstub pokes)
 *               is outside the guest.
 */
import type { VAddr } from './address';

export type WriteSource = 'cpu' | 'uaccess' | 'engine' | 'kernel' | 'textPoke' | 'loader' | 'debugger';

/** Whether a hardware data watchpoint would observe a write of this source (see the table above). */
export const HARDWARE_VISIBLE: Readonly<Record<WriteSource, boolean>> = {
  cpu: true, uaccess: true, engine: true, kernel: true, textPoke: false, loader: false, debugger: false,
};

/**
 * Called after [addr, addr+len) was written in the observed address space
 * (device registers included for CPU stores). Must not write guest memory
 * itself.
 */
export type WriteObserver = (addr: VAddr, len: number, source: WriteSource) => void;
