/**
 * Signals of user processes (real programs depend on them): dispositions set
 * by rt_sigaction, the blocked mask of rt_sigprocmask, pending signals, and
 * what happens when one is delivered — Linux's default actions (terminate,
 * ignore; core dumps are terminations here; stop/continue are not modelled
 * and act as ignore, said in the kernel log), or a handler run on a signal
 * frame the port builds (ArchOps.signalFrames: the arch's struct rt_sigframe)
 * and left through rt_sigreturn.
 */
export const SIGHUP = 1, SIGINT = 2, SIGQUIT = 3, SIGILL = 4, SIGTRAP = 5, SIGABRT = 6, SIGBUS = 7, SIGFPE = 8, SIGKILL = 9,
  SIGUSR1 = 10, SIGSEGV = 11, SIGUSR2 = 12, SIGPIPE = 13, SIGALRM = 14, SIGTERM = 15, SIGCHLD = 17, SIGCONT = 18,
  SIGSTOP = 19, SIGTSTP = 20, SIGTTIN = 21, SIGTTOU = 22, SIGURG = 23, SIGWINCH = 28;
export const NSIG = 64;
export const SIG_DFL = 0n, SIG_IGN = 1n;
export const SA_SIGINFO = 4n, SA_ONSTACK = 0x08000000n, SA_RESTART = 0x10000000n, SA_NODEFER = 0x40000000n,
  SA_RESETHAND = 0x80000000n, SA_RESTORER = 0x04000000n;

export interface SigAction { handler: bigint; flags: bigint; restorer: bigint; mask: bigint }

const bit = (sig: number): bigint => 1n << BigInt(sig - 1);
const UNBLOCKABLE = bit(SIGKILL) | bit(SIGSTOP);

/** What the default action of a signal is (signal(7)). */
export function defaultAction(sig: number): 'terminate' | 'ignore' | 'stop' | 'continue' {
  switch (sig) {
    case SIGCHLD: case SIGURG: case SIGWINCH: return 'ignore';
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU: return 'stop';
    case SIGCONT: return 'continue';
    default: return 'terminate';
  }
}

export class SignalState {
  readonly actions = new Map<number, SigAction>();
  blocked = 0n;
  pending = 0n;

  action(sig: number): SigAction {
    return this.actions.get(sig) ?? { handler: SIG_DFL, flags: 0n, restorer: 0n, mask: 0n };
  }

  setAction(sig: number, a: SigAction): void {
    if (a.handler === SIG_DFL && a.flags === 0n && a.mask === 0n) this.actions.delete(sig);
    else this.actions.set(sig, a);
    // setting SIG_IGN discards a pending instance
    if (a.handler === SIG_IGN || (a.handler === SIG_DFL && defaultAction(sig) === 'ignore')) this.pending &= ~bit(sig);
  }

  setBlocked(mask: bigint): void { this.blocked = BigInt.asUintN(64, mask) & ~UNBLOCKABLE; }

  raise(sig: number): void { this.pending |= bit(sig); }

  /** The lowest-numbered pending signal not blocked (taken off the pending set), or 0. */
  next(): number {
    const ready = this.pending & ~this.blocked;
    if (ready === 0n) return 0;
    for (let s = 1; s <= NSIG; s++) {
      if (ready & bit(s)) { this.pending &= ~bit(s); return s; }
    }
    return 0;
  }

  hasDeliverable(): boolean { return (this.pending & ~this.blocked) !== 0n; }

  /** fork: the child has the same dispositions and mask, nothing pending */
  forFork(): SignalState {
    const s = new SignalState();
    for (const [k, v] of this.actions) s.actions.set(k, { ...v });
    s.blocked = this.blocked;
    return s;
  }

  /** execve: caught signals go back to the default action; ignored ones stay ignored; the mask stays */
  onExec(): void {
    for (const [sig, a] of [...this.actions]) {
      if (a.handler !== SIG_IGN) this.actions.delete(sig);
      else this.actions.set(sig, { handler: SIG_IGN, flags: 0n, restorer: 0n, mask: 0n });
    }
  }
}

export { bit as sigBit };
