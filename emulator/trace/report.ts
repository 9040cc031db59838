/**
 * Text reports of the hit log for the command line (kprobe-run --hist,
 * --list) and any other plain-text front end.
 */
import type { HitLog } from './hitLog';
import { formatHistogram } from './histogram';

/** every kretprobe's latency histogram in bpftrace's layout ('' when no kretprobe returned) */
export function formatHistograms(log: HitLog): string {
  return log.histograms().map(h => formatHistogram(h)).join('');
}

/**
 * The --list section: "# kretprobe latency (ns)" and the histograms, when
 * a kretprobe returned; the hit log's size line when it dropped records.
 */
export function hitLogListSection(log: HitLog): string {
  let out = '';
  const hists = formatHistograms(log);
  if (hists) out += `# kretprobe latency (ns, entry -> return, virtual time)\n${hists}`;
  if (log.dropped) out += `# hit log: ${log.length} records kept, ${log.dropped} older ones dropped (ring of ${log.size})\n`;
  return out;
}

/** the warnings about missed hits, one "warning: ..." line each ('' when none) */
export function formatWarnings(log: HitLog): string {
  return log.warnings().map(w => `kprobe-run: warning: ${w.text}\n`).join('');
}
