/** A virtual clock the test moves by hand. */
import type { VirtualClock } from '../../../emulator/system/types';

export class TestClock implements VirtualClock {
  ns = 0n;
  readonly tscHz = 2_000_000_000n;
  nowNs(): bigint { return this.ns; }
}

/** an IRQ line that records its level and counts rising edges */
export class TestLine {
  level = false;
  rises = 0;
  readonly fn = (l: boolean): void => { if (l && !this.level) this.rises++; this.level = l; };
}
