/**
 * Breakpoints the Kprobes view disabled. "Disable Probe" on a breakpoint's
 * row disables its probe and the extension unticks the breakpoint
 * (extension/probeCommands.ts), so the client's next set*Breakpoints
 * request leaves it out: such a breakpoint is parked, its probe kept
 * registered and disabled (Linux's disable_kprobe leaves a probe listed,
 * [DISABLED]), until the client sends a breakpoint at the same place
 * again (ticked again, or "Enable Probe"), which gets the parked one back
 * under its id, with its counters.
 */
export class ParkedBreakpoints {
  /** DAP ids of breakpoints the view disabled */
  private readonly disabled = new Set<number>();
  /** parked ids by where they were ("path:line", "fn:name") */
  private readonly byKey = new Map<string, number>();
  /** a function breakpoint's key */
  private readonly functionKeys = new Map<number, string>();

  /** the view disabled (enabled) a breakpoint's probe */
  setDisabled(id: number, disabled: boolean): void {
    if (disabled) this.disabled.add(id); else this.disabled.delete(id);
  }

  isDisabled(id: number): boolean { return this.disabled.has(id); }

  /** remember a function breakpoint's place */
  setFunctionKey(id: number, name: string): void { this.functionKeys.set(id, ParkedBreakpoints.functionKey(name)); }
  functionKeyOf(id: number): string | undefined { return this.functionKeys.get(id); }
  static functionKey(name: string): string { return `fn:${name}`; }

  /** Of `ids` (replaced by a request whose places are `keep`), the view-disabled ones left out: parked; their ids. */
  park(ids: readonly number[], keyOf: (id: number) => string | undefined, keep: readonly string[]): Set<number> {
    const out = new Set<number>();
    for (const id of ids) {
      const key = keyOf(id);
      if (!this.disabled.has(id) || key === undefined || keep.includes(key)) continue;
      this.byKey.set(key, id);
      out.add(id);
    }
    return out;
  }

  /** The parked breakpoint at a place, taken off the parking (undefined: none). */
  take(key: string): number | undefined {
    const id = this.byKey.get(key);
    if (id !== undefined) this.byKey.delete(key);
    return id;
  }

  /** a breakpoint went away */
  forget(id: number): void {
    this.disabled.delete(id);
    this.functionKeys.delete(id);
    for (const [k, v] of this.byKey) if (v === id) this.byKey.delete(k);
  }
}
