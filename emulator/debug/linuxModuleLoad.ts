/**
 * The moment a module's code becomes known on the Linux machine, so that a
 * breakpoint set before `insmod` in a module's code (its init function
 * included) stops the first time that code runs.
 *
 * Linux's load_module lays the module out, relocates it, fills
 * `mod->sect_attrs` (the section addresses the debugger reads) and marks it
 * MODULE_STATE_COMING, then calls do_init_module, which calls mod->init.
 * While the launch has `modules`, do_init_module's entry is one of the
 * debugger's own execute slots (nothing written to guest memory, the guest
 * never sees it): when a CPU gets there the listeners run (the session
 * reads the module list and places the pending source breakpoints in the
 * module's code) and the machine goes on without a stop the user sees.
 * Deterministic: it does not depend on when the front end looks.
 */
import type { ElfImage } from '../elf/types';
import type { LinuxModuleDebug } from './linuxModuleDebug';

/** the kernel function that runs a freshly laid out module's init (kernel/module/main.c) */
export const MODULE_INIT_RUNNER = 'do_init_module';

export class LinuxModuleLoads {
  private readonly listeners: (() => void)[] = [];
  private image: ElfImage | undefined;
  private addr: bigint | undefined;

  listen(l: () => void): void { this.listeners.push(l); }

  /** the hook's address while there are modules to place (the vmlinux's view now: moved once the KASLR slide is known) */
  hook(mods: LinuxModuleDebug | undefined, vmlinux: ElfImage | undefined): bigint[] {
    if (!mods || mods.names.length === 0 || !vmlinux) { this.addr = undefined; return []; }
    if (vmlinux !== this.image) { this.image = vmlinux; this.addr = vmlinux.symbols.lookup(MODULE_INIT_RUNNER)?.value; }
    return this.addr === undefined ? [] : [this.addr];
  }

  /** true when `pc` is the hook */
  at(pc: bigint): boolean { return this.addr !== undefined && pc === this.addr; }

  /** a CPU reached the hook: a module's init is next */
  loaded(): void { for (const l of this.listeners) l(); }
}
