/**
 * KprobesEngine's own methods are Linux's kprobes API (register_* /
 * unregister_* / enable_* / disable_*, get_kprobe, jprobe_return,
 * kill_kprobe, wait_for_kprobe_optimizer) and the entry points of the
 * debugfs and sysctl files; a caller that wants what a part knows (the probe
 * table as the debugger reads it, the text without probes, the optimizer's
 * status, the per-CPU control blocks, kretprobe instances, nested calls,
 * the on-CPU gate) reaches that part, never a pass-through on the engine.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KprobesEngine } from '../../emulator/kprobes/core';

/** Linux's API (include/linux/kprobes.h) in this engine's spelling */
const LINUX_API = [
  'registerKprobe', 'registerKprobeResult', 'registerKprobes', 'unregisterKprobe', 'unregisterKprobes', 'enableKprobe', 'disableKprobe',
  'registerKretprobe', 'registerKretprobeResult', 'registerKretprobes', 'unregisterKretprobe', 'unregisterKretprobes', 'enableKretprobe', 'disableKretprobe',
  'registerJprobe', 'registerJprobeResult', 'registerJprobes', 'unregisterJprobe', 'unregisterJprobes', 'enableJprobe', 'disableJprobe', 'jprobeReturn',
  'getKprobe', 'killKprobesIn', 'waitForOptimizer', 'cApi',
];
/** debugfs kprobes/enabled, sysctl debug.kprobes_optimization, the trap's kind of site */
const ENTRY_POINTS = ['enabled', 'setEnabled', 'optimization', 'setOptimization', 'breakpointSite'];

test('KprobesEngine has Linux\'s API and the debugfs/sysctl entry points, no pass-throughs to its parts', () => {
  const own = Object.getOwnPropertyNames(KprobesEngine.prototype).filter(n => n !== 'constructor').sort();
  assert.deepEqual(own, [...LINUX_API, ...ENTRY_POINTS].sort());
});
