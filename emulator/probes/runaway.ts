/**
 * Runaway handlers, bounded per probe: every handler run that ends in a
 * 'budget' fault (the step budget per run, see emulator/handlers/README.md)
 * adds to the probe's streak, every run that ends otherwise resets it. At
 * RUNAWAY_DISABLE_AFTER budget faults in a row the probe is disabled
 * (disable_kprobe on every registered site, listed [DISABLED]; enable
 * re-arms it and the streak starts again) with one kernel-log line, in the
 * spirit of the kernel's "kprobe ... disabled" messages.
 *
 * Why 3: one budget fault can be an input that makes a correct loop long;
 * the same probe running away on three hits in a row with no completed run
 * in between is a loop that does not end, and each further hit would only
 * burn another budget of steps (charged to the virtual clock and the
 * instruction limit) and print another budget's worth of output.
 */
export const RUNAWAY_DISABLE_AFTER = 3;

export class RunawayWatch {
  private streak = 0;

  constructor(readonly limit = RUNAWAY_DISABLE_AFTER) {}

  /** a handler run of the probe ended without a budget fault */
  completed(): void { this.streak = 0; }

  /** a handler run ended in a budget fault; true when the streak reached the limit (the caller disables the probe; the streak starts again) */
  budgetFault(): boolean {
    if (++this.streak < this.limit) return false;
    this.streak = 0;
    return true;
  }
}
