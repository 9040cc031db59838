/**
 * Display names of probes for the hit log ("do_fork+0x0", "/bin/x:0x1139",
 * "kwatch w boot_counter+0x0/8": the `probe` the engines pass to
 * Kernel.probeHit / probeMissed), built once per probe object on its first
 * hit and kept (a probe's name never changes while it is registered). A
 * cache of what the probe objects say: derived state for time travel (the
 * snapshotter empties it after a restore).
 */
import { derivedState } from '../base/marks';

export class ProbeNameCache<K extends object> {
  private names = new WeakMap<K, string>();
  /** the last probe asked for and its name (a hot probe's hits skip the WeakMap) */
  private last: K | null = null;
  private lastName = '';

  constructor(private readonly build: (probe: K) => string) {
    derivedState(this, () => { this.names = new WeakMap(); this.last = null; });
  }

  get(probe: K): string {
    if (probe === this.last) return this.lastName;
    let n = this.names.get(probe);
    if (n === undefined) { n = this.build(probe); this.names.set(probe, n); }
    this.last = probe;
    this.lastName = n;
    return n;
  }
}
