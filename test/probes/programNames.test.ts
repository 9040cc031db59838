/**
 * DWARF names in .kprobe handlers (as perf probe's fetch args name them): a
 * pre / entry / jprobe handler names the probed function's parameters and
 * locals in scope at the probe's pc; the value is fetched from the probed
 * context by the name's DWARF location (register, stack slot via the CFA...)
 * on every arch; a name with no location there is a compile error naming
 * the place; context names (regs, p...) keep their meaning.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { PORTS } from '../../emulator/ports';
import { sampleImage } from '../kprobes/harness';
import { runAll } from './helpers';
import { probesOf } from '../../emulator/probes/attach';

describe('DWARF names in probe handlers', () => {
  for (const port of PORTS.filter(p => p.hasCpu)) {
    test(`${port.name}: sys_open's filename and flags, do_fork's clone_flags: the same as the argument registers`, () => {
      const m = new Machine(sampleImage(port.name), { cpus: 2, maxInstructions: 50_000_000 });
      const r = probesOf(m).addProbeFile(
        'kprobe sys_open { pre { printk("open %s|%s flags=%d|%d\\n", filename, (char *)arg0, flags, (int)arg1); return 0; } }\n'
        + 'kretprobe do_fork { entry { printk("fork %lu|%lu\\n", clone_flags, arg0); return 0; } }\n', 'names.kprobe');
      assert.deepEqual(r.diagnostics, []);
      assert.deepEqual(r.errors, []);
      const lines = runAll(m).lines;
      const opens = lines.filter(l => l.startsWith('open '));
      const forks = lines.filter(l => l.startsWith('fork '));
      assert.ok(opens.length >= 3 && forks.length >= 10, `${opens.length} opens, ${forks.length} forks`);
      for (const l of opens) {
        const mm = /^open (.*)\|(.*) flags=(-?\d+)\|(-?\d+)$/.exec(l);
        assert.ok(mm, l);
        assert.equal(mm[1], mm[2]);
        assert.equal(mm[3], mm[4]);
      }
      assert.ok(opens.some(l => l.startsWith('open /etc/hostname|')));
      for (const l of forks) { const [a, b] = l.slice(5).split('|'); assert.equal(a, b); }
    });
  }

  test('a name without a location at the pc is a compile error naming the place; context names win', () => {
    const m = new Machine(sampleImage('x86_64'), { cpus: 1 });
    const d = probesOf(m).compileProbeFile('kprobe do_fork { pre { return err; } }\nkprobe do_fork { pre { return regs->di == 0; } }\n', 'o.kprobe').diagnostics;
    assert.deepEqual(d.map(x => `${x.line}:${x.column}: ${x.message}`), [
      "1:31: 'err' (local of do_fork) is optimized out at do_fork+0x0: the compiler kept no location for it there",
    ]);
    const post = probesOf(m).compileProbeFile('kprobe sys_open { post { printk("%s", filename); } }\n', 'p.kprobe').diagnostics;
    assert.match(post.map(x => x.message).join('\n'), /'filename' is not declared/, 'post handlers run after the instruction: no program names');
  });

  for (const port of PORTS.filter(p => p.hasCpu)) {
    test(`${port.name}: struct members through a pointer argument, a cast to the program's struct type, globals and statics in any handler`, () => {
      const m = new Machine(sampleImage(port.name), { cpus: 1, maxInstructions: 50_000_000 });
      const r = probesOf(m).addProbeFile(
        'kprobe vfs_read { pre { printk("read %s fd=%d size=%lu|%d sizeof=%lu\\n", file->name, file->fd, (*file).size, ((struct file *)arg0)->fd, sizeof(struct file)); return 0; } }\n'
        + 'kretprobe alloc_pid { return { printk("pid %ld|%ld\\n", regs_return_value(regs), last_pid); return 0; } }\n', 'structs.kprobe');
      assert.deepEqual(r.diagnostics, []);
      assert.deepEqual(r.errors, []);
      const lines = runAll(m).lines;
      const reads = lines.filter(l => l.startsWith('read '));
      const pids = lines.filter(l => l.startsWith('pid '));
      assert.ok(reads.length >= 3 && pids.length >= 5, `${reads.length} reads, ${pids.length} pids`);
      for (const l of reads) {
        const mm = /^read (\S+) fd=(\d+) size=(\d+)\|(\d+) sizeof=32$/.exec(l);
        assert.ok(mm, l);
        assert.equal(mm[2], mm[4], 'file->fd = ((struct file *)arg0)->fd');
      }
      assert.ok(reads.some(l => l.startsWith('read /etc/hostname ')), reads.join('\n'));
      // alloc_pid returns atomic_add_return(1, &last_pid): the static's value after it
      for (const l of pids) { const [a, b] = l.slice(4).split('|'); assert.equal(a, b); }
    });
  }

  test('breakpoint conditions and log messages name the variables in scope at the site, and globals', () => {
    const m = new Machine(sampleImage('x86_64'), { cpus: 1, maxInstructions: 50_000_000 });
    const logged: string[] = [];
    m.onPrintk(rec => logged.push(rec.text));
    const e = probesOf(m).addBreakpoint({ target: 'vfs_read', condition: 'file->fd == 3 && count > 0', logMessage: 'log {file->name} fd={file->fd} count={count} last_pid={last_pid}' });
    assert.equal(e.verified, true, e.message);
    runAll(m);
    const lines = logged.filter(l => l.includes('log '));
    assert.ok(lines.length >= 1, logged.slice(-20).join('\n'));
    for (const l of lines) assert.match(l, /log \/\S+ fd=3 count=\d+ last_pid=\d+/);
    // a misspelt member: the breakpoint is not verified and says why
    const bad = probesOf(m).addBreakpoint({ target: 'vfs_read', condition: 'file->fdd == 3' });
    assert.equal(bad.verified, false);
    assert.match(bad.message ?? '', /condition: .*struct file has no member 'fdd'/);
  });
});
