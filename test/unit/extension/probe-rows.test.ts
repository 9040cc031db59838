/**
 * Kprobes view rows (a narrow side bar cuts long labels): what must survive
 * the side bar's cut (kind, symbol+offset, debugfs flags, hits/missed) is in
 * the label, the address and the rest in the description, the full debugfs
 * line with its counters in the tooltip; an ended session's rows carry the
 * ended mark.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import type { ProbeInfo, UprobeInfo } from '../../../adapter/dapCustom';
import {
  ENDED_MARK, kprobeDescription, kprobeLabel, kprobeListLine, kprobeRow, kprobeTooltip, uprobeDescription,
} from '../../../extension/probeRows';

function kprobe(over: Partial<ProbeInfo>): ProbeInfo {
  return {
    id: 1, engineId: 1, kind: 'kprobe', name: 'do_fork+0x1a', address: '0xffffffff81001a90', enabled: true, gone: false,
    nhit: 3, nmissed: 0, symbol: 'do_fork', offset: 0x1a, registered: true, optimized: false, ftrace: false, ...over,
  };
}

describe('Kprobes view rows', () => {
  test('label: kind letter, symbol+offset, flags, hits/missed; description: the address', () => {
    const p = kprobe({ enabled: false, nhit: 12, nmissed: 2 });
    assert.equal(kprobeLabel(p), 'k do_fork+0x1a [DISABLED] 12/2');
    assert.equal(kprobeDescription(p), 'hits/missed  ffffffff81001a90');
    assert.equal(kprobeListLine(p), 'ffffffff81001a90  k  do_fork+0x1a    [DISABLED]');
    assert.equal(kprobeTooltip(p).split('\n')[0], 'ffffffff81001a90  k  do_fork+0x1a    [DISABLED]  hits 12, missed 2');
  });

  test('several flags in the kernel order, no flag: no blank pair', () => {
    assert.equal(kprobeLabel(kprobe({ optimized: true, ftrace: true })), 'k do_fork+0x1a [OPTIMIZED][FTRACE] 3/0');
    assert.equal(kprobeLabel(kprobe({})), 'k do_fork+0x1a 3/0');
    assert.equal(kprobeLabel(kprobe({ gone: true, enabled: false })), 'k do_fork+0x1a [GONE] 3/0');
  });

  test('kretprobe: r, maxactive and the module in the description; no symbol: the address in the label', () => {
    const r = kprobe({ kind: 'kretprobe', name: 'r:sys_open+0x0', symbol: 'sys_open', offset: 0, maxactive: 20, module: 'mod_a', nhit: 1 });
    assert.equal(kprobeLabel(r), 'r sys_open+0x0 1/0');
    assert.equal(kprobeDescription(r), 'hits/missed  ffffffff81001a90  mod_a  maxactive 20');
    assert.equal(kprobeTooltip(r).split('\n')[0], kprobeRow(r));
    assert.ok(kprobeTooltip(r).includes('module mod_a'));
    const bare = kprobe({ symbol: undefined, offset: undefined, name: '0xffffffff81001a90' });
    assert.equal(kprobeLabel(bare), 'k ffffffff81001a90 3/0');
  });

  test('an unregistered probe shows its name (the failure) and no counters', () => {
    const p = kprobe({ registered: false, name: 'do_frok: no such symbol (-ENOENT)' });
    assert.equal(kprobeLabel(p), 'do_frok: no such symbol (-ENOENT)');
    assert.equal(kprobeDescription(p), '');
    assert.equal(kprobeDescription(p, true), ENDED_MARK);
  });

  test('an ended session: the mark first in the description and in the tooltip, the label unchanged', () => {
    const p = kprobe({ nhit: 97, nmissed: 97 });
    assert.equal(kprobeLabel(p), 'k do_fork+0x1a 97/97');
    assert.equal(kprobeDescription(p, true), `${ENDED_MARK}  hits/missed  ffffffff81001a90`);
    assert.ok(kprobeTooltip(p, true).split('\n').some(l => l.startsWith(ENDED_MARK)));
    assert.ok(!kprobeTooltip(p, false).includes(ENDED_MARK));
    const u: UprobeInfo = {
      id: 7, kind: 'uprobe', name: '/bin/app:0x10', address: '0x0000000000400010', enabled: true, gone: false,
      nhit: 2, nmissed: 0, inode: 12, offset: 0x10, path: '/bin/app', processes: [], consumers: 1, registered: true,
    };
    assert.equal(uprobeDescription(u, true), `${ENDED_MARK}  not inserted  hits 2, missed 0`);
  });
});
