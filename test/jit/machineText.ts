/**
 * A finished machine's hit log and console as text, for tests that compare
 * two runs of the same image (translator on and off, fused and general hit
 * paths): equal texts mean the same hits (every field, addresses in hex) and
 * the same console lines at the same virtual times on the same CPUs.
 */
import type { Machine } from '../../emulator/machine';

/** the machine's hit log as text (its addresses in hex) */
export function hitLogText(m: Machine): string {
  return JSON.stringify(m.hitLog.records().map(h => ({ ...h, addr: h.addr.toString(16) })));
}

/** the machine's console, a line per record with its virtual time and CPU */
export function printkText(m: Machine): string {
  return m.printkRecords.map(x => `${x.timeNs} ${x.cpu} ${x.text}`).join('\n');
}
