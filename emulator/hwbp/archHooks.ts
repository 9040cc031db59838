/**
 * The arch half of hardware breakpoints (Linux arch/<arch>/kernel/
 * hw_breakpoint.c): what debug registers the CPU has, which requests they
 * can express, and how one is programmed. The kernel half (emulator/hwbp/:
 * the per-CPU allocator shared by register_kwatch, the debugger's data and
 * hardware breakpoints, and the #DB / debug-exception handler) never
 * switches on the architecture.
 *
 * install/uninstall program the CPU's own registers (x86 DR0-DR3 + DR7,
 * arm64 DBGBVR/DBGBCR or DBGWVR/DBGWCR), which the CPU decodes into its
 * match unit (emulator/cpu/hwDebug.ts) as a guest's writes to them would.
 */
import type { Cpu } from '../arch/types';

/** What a hardware breakpoint watches: execute, write, read (arm64 only), read-or-write. */
export type HwBpType = 'x' | 'w' | 'r' | 'rw';

export interface HwBpRequest {
  addr: bigint;
  /** bytes (x86: 1, 2, 4, 8; arm64: 1..8 inside an aligned doubleword; execute: the arch's instruction size rule) */
  len: number;
  type: HwBpType;
}

export interface HwDebugArchHooks {
  /**
   * Register pools per CPU. x86: one pool of 4 (DR0-DR3) shared by execute
   * and data breakpoints (`exec: 'shared'`); arm64: `exec` breakpoint
   * register pairs and `data` watchpoint register pairs, as ID_AA64DFR0_EL1
   * advertises.
   */
  readonly pools: { readonly data: number; readonly exec: number | 'shared' };
  /** register names as the arch's documentation writes them: ('data', 2) -> "DR2" / "DBGWVR2_EL1" */
  registerName(pool: 'exec' | 'data', index: number): string;
  /**
   * hw_breakpoint_arch_parse: null when the CPU can express the request;
   * otherwise the errno (Linux's: -EINVAL for a length / alignment / type
   * the registers cannot hold) and a reason naming what is wrong.
   */
  validate(req: HwBpRequest): { errno: number; reason: string } | null;
  /** arch_install_hw_breakpoint: program register `index` of `pool` on `cpu` and enable it */
  install(cpu: Cpu, pool: 'exec' | 'data', index: number, req: HwBpRequest): void;
  /** arch_uninstall_hw_breakpoint: disable register `index` of `pool` on `cpu` */
  uninstall(cpu: Cpu, pool: 'exec' | 'data', index: number): void;
  /**
   * The #DB / debug exception was handled: clear the status the hit left
   * (x86: DR6 B0-B3 and BS, as Linux's do_debug writes DR6 back), so the
   * next report starts clean.
   */
  acknowledge(cpu: Cpu): void;
  /** the debug registers' raw values for the views ("DR7" = 0x...) */
  snapshot(cpu: Cpu): { name: string; value: bigint }[];
}
