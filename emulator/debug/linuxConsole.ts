/**
 * The Linux machine's UART output as the debugger keeps it: the bytes since
 * the last flush go to the listeners in whole pieces (a run chunk's worth),
 * everything printed is kept so a panic's text can be shown, and the first
 * line with Linux's panic banner is noted as it is printed.
 */
const PANIC = 'Kernel panic - not syncing';

export class LinuxConsole {
  private readonly listeners: ((text: string) => void)[] = [];
  private readonly decoder = new TextDecoder('latin1');
  private pending = '';
  /** everything the console printed (the panic text is searched here) */
  private text = '';
  private panicAt = -1;
  private panicShown = false;

  /** one byte the guest wrote to the UART */
  put(b: number): void {
    const ch = this.decoder.decode(new Uint8Array([b]));
    this.pending += ch;
    this.text += ch;
    if (this.panicAt < 0 && ch === '\n') {
      const at = this.text.lastIndexOf(PANIC);
      if (at >= 0) this.panicAt = at;
    }
  }

  /** the guest's console output, as it is printed (in pieces of whole bytes) */
  onText(l: (text: string) => void): void { this.listeners.push(l); }

  /** what was printed since the last flush, to the listeners */
  flush(): void {
    if (this.pending.length === 0) return;
    const t = this.pending;
    this.pending = '';
    for (const l of this.listeners) l(t);
  }

  /** the guest has printed a panic banner */
  get panicked(): boolean { return this.panicAt >= 0; }
  /** the guest panicked and no stop has shown it yet */
  get panicPending(): boolean { return this.panicAt >= 0 && !this.panicShown; }
  /** the panic's text from its banner on, once (the stop that shows it); its first line is the description */
  takePanic(): string { this.panicShown = true; return this.text.slice(this.panicAt); }
}
