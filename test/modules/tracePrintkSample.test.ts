/**
 * Linux 6.1's samples/trace_printk/trace-printk.c (fetched from Debian's
 * linux-source-6.1, never committed), built unmodified with the headers'
 * Kbuild-like Makefile (`make -C examples/include M=... ARCH=...
 * CONFIG_SAMPLE_TRACE_PRINTK=m`) and loaded into the sample kernel: its
 * trace_printk / trace_puts calls land in the trace buffer as Linux shows
 * them ("FUNC: text", FUNC the caller), the irq_work it queues runs
 * trace_printk_irq_work before init goes on, and a kprobe event on
 * trace_printk:trace_printk_irq_work (kprobe_module.tc's target) is hit.
 * The expected texts are the sample's own strings with their formats
 * filled in.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { KBUILD_ARCHES, builtModule, kbuild, unavailable } from './kbuild';

const SAMPLE = repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1', 'samples', 'trace_printk');

/** what the sample writes, in order: init's two, the irq work's four, init's last two */
const TEXTS: readonly (readonly [string, string])[] = [
  ['init', 'This is a static string that will use trace_bputs'],
  ['init', 'This is a dynamic string that will use trace_puts'],
  ['trace_printk_irq_work', '(irq) This is a static string that will use trace_bputs'],
  ['trace_printk_irq_work', '(irq) This is a dynamic string that will use trace_puts'],
  ['trace_printk_irq_work', '(irq) This is a static string that will use trace_bprintk()'],
  ['trace_printk_irq_work', '(irq) This is a dynamic string that will use trace_printk'],
  ['init', 'This is a static string that will use trace_bprintk()'],
  ['init', 'This is a dynamic string that will use trace_printk'],
];

describe("Linux's samples/trace_printk, unmodified, in the sample kernel", () => {
  for (const arch of KBUILD_ARCHES) {
    test(`${arch}: trace_printk lines in the trace, the irq work run, a kprobe event on the module's function hit`, async t => {
      if (!existsSync(join(SAMPLE, 'trace-printk.c'))) {
        unavailable(t, "Linux's samples/trace_printk (Debian's linux-source-6.1) is not fetched: run test/modules/linux/fetch-test-kprobes.sh 6.1");
        return;
      }
      const b = kbuild(SAMPLE, arch, ['CONFIG_SAMPLE_TRACE_PRINTK=m']);
      if ('missing' in b) { unavailable(t, b.missing); return; }
      const c = captureIo();
      const code = await runCli(['run', repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`),
        '--module', builtModule(b.out, 'trace-printk'), '--event', 'p:irqw trace_printk:trace_printk_irq_work'], c.io);
      assert.equal(code, 0, c.stderr());
      const lines = c.stdout().split('\n');
      const traced = lines.map(l => /^\s+\S+-\d+\s+\[\d{3}\] \.{5}\s+\d+\.\d{6}: (\w+): (.*)$/.exec(l)).filter(m => m !== null);
      assert.deepEqual(traced.map(m => m[2]), TEXTS.map(([, text]) => text), c.stdout());
      // FUNC is the caller (%ps): the irq work's function, and the module's init by its own name, as Linux prints it
      // (find_kallsyms_symbol takes the static trace_printk_init before module_init's init_module alias at its address)
      assert.deepEqual(traced.map(m => m[1]), TEXTS.map(([fn]) => (fn === 'init' ? 'trace_printk_init' : fn)), c.stdout());
      const hit = lines.findIndex(l => /: irqw: \(trace_printk_irq_work\+0x0\/0x[0-9a-f]+ \[trace_printk\]\)$/.test(l));
      assert.ok(hit >= 0, `the event on the module's function was hit:\n${c.stdout()}`);
      // the irq work ran inside init, after init's first two lines and before its last two
      assert.ok(lines.indexOf(traced[1][0]) < hit && hit < lines.indexOf(traced[2][0]), c.stdout());
    });
  }
});
