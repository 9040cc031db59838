/**
 * debugfs's kprobes directory (kernel/kprobes.c debugfs_kprobe_init):
 *
 *   kprobes/list       every registered kprobe, the text the CLI's --list
 *                      prints under "cat /sys/kernel/debug/kprobes/list"
 *                      (both read the probe manager's debugfsList)
 *   kprobes/blacklist  the addresses kprobes refuse (NOKPROBE_SYMBOL), one
 *                      range a line as Linux prints them: "0xSTART-0xEND\tsym"
 *   kprobes/enabled    "1\n" / "0\n"; writing 0/n disarms every kprobe,
 *                      1/y re-arms them (the engine's knob); other text
 *                      -EINVAL
 *
 * debugfs also holds `tracing`, where tracefs is mounted (Linux's automount
 * of tracefs at /sys/kernel/debug/tracing).
 */
import { Errno } from '../abi';
import { PseudoFile, addPseudoFiles, pseudoDir } from './pseudo';
import type { Inode, Vfs } from './vfs';

/** What debugfs shows of the kprobes engine (the probe manager answers these). */
export interface KprobesDebugSource {
  readonly hasKprobes: boolean;
  debugfsList(): string;
  readonly kprobesEnabled: boolean;
  writeKprobesEnabled(text: string): number;
}

export interface BlacklistRange { start: bigint; end: bigint; name: string }

/** kprobe_blacklist_seq_show: "0x%px-0x%px\t%ps\n" */
export function formatBlacklist(ranges: readonly BlacklistRange[]): string {
  const px = (v: bigint): string => `0x${v.toString(16).padStart(16, '0')}`;
  return ranges.map(r => `${px(r.start)}-${px(r.end)}\t${r.name}\n`).join('');
}

export function makeDebugfs(fs: Vfs, kprobes: () => KprobesDebugSource | null, blacklist: () => readonly BlacklistRange[]): Inode {
  const root = pseudoDir(fs, 0o700);
  const enabled: PseudoFile = {
    show: () => (kprobes()?.kprobesEnabled ? '1\n' : '0\n'),
    write: text => {
      const src = kprobes();
      if (!src?.hasKprobes) return -Errno.ENODEV;
      const rc = src.writeKprobesEnabled(text);
      return rc < 0 ? rc : new TextEncoder().encode(text).length;
    },
  };
  addPseudoFiles(fs, root, {
    'kprobes/list': { show: () => kprobes()?.debugfsList() ?? '' },
    'kprobes/enabled': enabled,
    'kprobes/blacklist': { show: () => (kprobes()?.hasKprobes ? formatBlacklist(blacklist()) : '') },
    tracing: pseudoDir(fs, 0o700),
  });
  return root;
}
