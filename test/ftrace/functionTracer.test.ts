/**
 * The function tracer's and the stack tracer's tracefs files
 * (emulator/tracing/functionTracer.ts, ftraceStack.ts) on the sample
 * kernel, against the formats of a real Linux 6.1 system (Debian 12's
 * 6.1 kernel; the same as Documentation/trace/ftrace.rst shows):
 *
 *   # cat available_tracers
 *   blk function_graph wakeup_dl wakeup_rt wakeup function nop
 *   # cat set_ftrace_filter
 *   #### all functions enabled ####
 *   # cat set_ftrace_notrace
 *   #### no functions disabled ####
 *   # cat trace
 *   # tracer: function
 *   ...
 *               bash-1994    [002] .....  3082.063030: mutex_unlock <-rb_simple_write
 *   # cat stack_trace
 *           Depth    Size   Location    (18 entries)
 *           -----    ----   --------
 *     0)     4824     216   ftrace_call+0x5/0x34
 *
 * available_filter_functions holds one name per line, in address order,
 * of the functions whose first instruction is `call __fentry__` (here: those
 * examples/kernel/build.sh builds -pg -mfentry on x86_64), found from the
 * ELF image here. The traced calls come from the boot's lib_selftest, whose
 * C source fixes which helper calls which: kstrtouint is called twice by
 * test_kstrtox and once by match_uint (lib/parser.c).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage } from '../../emulator/elf/types';
import { Machine } from '../../emulator/machine';
import { openPseudo } from '../../emulator/kernel/fs/pseudo';
import { O_APPEND, O_TRUNC, O_WRONLY } from '../../emulator/kernel/user/files';
import { mustVAddr } from '../../emulator/memory/address';
import { attachProbes } from '../../emulator/probes/attach';
import { repoPath } from '../util/paths';

const T = '/sys/kernel/tracing';
const image = (arch: string): ElfImage => loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`));

function pseudo(m: Machine, path: string) {
  const r = m.kernel.fs.lookup(path, m.kernel.fs.root);
  assert.ok(r.ok && r.inode.pseudo, `${path} exists`);
  return r.inode.pseudo;
}
const exists = (m: Machine, path: string): boolean => m.kernel.fs.lookup(path, m.kernel.fs.root).ok;

function read(m: Machine, path: string): string {
  const dev = openPseudo(pseudo(m, path), 0);
  assert.ok(typeof dev !== 'number', `open ${path}: ${String(dev)}`);
  return new TextDecoder().decode(dev.read(1 << 24) as Uint8Array);
}

/** `echo TEXT > PATH` ('>') or `>> PATH`: the write's result (bytes or -errno) */
function write(m: Machine, path: string, text: string, how: '>' | '>>' = '>'): number {
  const dev = openPseudo(pseudo(m, path), O_WRONLY | (how === '>' ? O_TRUNC : O_APPEND));
  if (typeof dev === 'number') return dev;
  return dev.write(new TextEncoder().encode(text)) as number;
}

/** the image's functions whose first instruction is `call __fentry__`, in address order */
function fentryFunctions(img: ElfImage, m: Machine): string[] {
  const fentry = img.symbols.lookup('__fentry__');
  assert.ok(fentry, '__fentry__ exists');
  const out = new Map<bigint, string>();
  for (const s of img.symbols.all()) {
    if (s.type !== 'func' || s.shndx === 0 || s.value === fentry.value || out.has(s.value)) continue;
    const b = m.kernel.mem.readBytes(mustVAddr(s.value), 5);
    if (b[0] !== 0xe8) continue;
    const rel = new DataView(b.buffer, b.byteOffset, 5).getInt32(1, true);
    if (BigInt.asUintN(64, s.value + 5n + BigInt(rel)) === fentry.value) out.set(s.value, s.name);
  }
  return [...out.entries()].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([, n]) => n);
}

const bodyLines = (trace: string): string[] => trace.split('\n').filter(l => l && !l.startsWith('#'));
/** "%16s-%-7d [%03d] ..... %5lu.%06lu: FUNC <-PARENT" */
const FN_LINE = /^ *(\S.{0,15})-(\d+) +\[(\d{3})\] \.{5} +\d+\.\d{6}: (\S+) <-(\S+)$/;

describe('function tracer files (x86_64: functions built -pg -mfentry)', () => {
  test('available_tracers, current_tracer and available_filter_functions: the fentry functions in address order', () => {
    const img = image('x86_64');
    const m = new Machine(img);
    assert.equal(read(m, `${T}/available_tracers`), 'function nop\n');
    assert.equal(read(m, `${T}/current_tracer`), 'nop\n');
    const want = fentryFunctions(img, m);
    assert.ok(want.includes('kernel_clone') && want.includes('kstrtouint') && !want.includes('do_fork'), want.join(' '));
    assert.equal(read(m, `${T}/available_filter_functions`), want.map(n => `${n}\n`).join(''));
    assert.equal(write(m, `${T}/current_tracer`, 'function_graph\n'), -22);
    assert.equal(write(m, `${T}/current_tracer`, 'function\n'), 9);
    assert.equal(read(m, `${T}/current_tracer`), 'function\n');
    assert.match(read(m, `${T}/trace`), /^# tracer: function\n#\n# entries-in-buffer\/entries-written: 0\/0   #P:\d+\n/);
    assert.equal(write(m, `${T}/current_tracer`, 'nop\n'), 4);
    // the debugfs view of the same tracefs
    assert.equal(read(m, '/sys/kernel/debug/tracing/current_tracer'), 'nop\n');
  });

  test("set_ftrace_filter / set_ftrace_notrace: empty texts, globs, '!', '>' and '>>', a word matching nothing is -EINVAL", () => {
    const m = new Machine(image('x86_64'));
    const F = `${T}/set_ftrace_filter`, N = `${T}/set_ftrace_notrace`;
    assert.equal(read(m, F), '#### all functions enabled ####\n');
    assert.equal(read(m, N), '#### no functions disabled ####\n');
    const all = read(m, `${T}/available_filter_functions`).split('\n').filter(Boolean);
    const kstrto = all.filter(n => n.startsWith('kstrto'));
    assert.ok(kstrto.length >= 8, kstrto.join(' '));
    assert.equal(write(m, F, 'kstrto*\n'), 8);
    assert.equal(read(m, F), kstrto.map(n => `${n}\n`).join(''));
    assert.equal(write(m, F, '!kstrtoint\n', '>>'), 11);
    assert.equal(read(m, F), kstrto.filter(n => n !== 'kstrtoint').map(n => `${n}\n`).join(''));
    assert.equal(write(m, F, 'kernel_clone strs?py\n', '>>'), 21);
    assert.ok(read(m, F).includes('kernel_clone\n') && read(m, F).includes('strscpy\n'));
    assert.equal(write(m, F, 'no_such_function\n', '>>'), -22);
    assert.equal(write(m, F, 'kernel_clone\n'), 13);
    assert.equal(read(m, F), 'kernel_clone\n');
    assert.equal(write(m, F, '\n'), 1);
    assert.equal(read(m, F), '#### all functions enabled ####\n');
    assert.equal(write(m, N, 'crc*\n'), 5);
    assert.equal(read(m, N), all.filter(n => n.startsWith('crc')).map(n => `${n}\n`).join(''));
  });

  test("tracing a boot: 'func <-parent' lines of the filtered function, one per call; nop stops; a kprobe there is [FTRACE] and both report", () => {
    const img = image('x86_64');
    const m = new Machine(img);
    attachProbes(m);
    const before = m.kernel.mem.readBytes(mustVAddr(img.symbols.lookup('kstrtouint')!.value), 5);
    assert.equal(write(m, `${T}/set_ftrace_filter`, 'kstrtouint\n'), 11);
    assert.equal(write(m, `${T}/current_tracer`, 'function\n'), 9);
    // registered while the function tracer has the call site: still an ftrace-based probe
    assert.ok(write(m, `${T}/kprobe_events`, 'p:kp kstrtouint\n') > 0);
    assert.ok(write(m, `${T}/events/kprobes/kp/enable`, '1\n') > 0);
    assert.match(read(m, '/sys/kernel/debug/kprobes/list'), /^[0-9a-f]{16} {2}k {2}kstrtouint\+0x0 {4}\[FTRACE\]\n$/);
    m.run();
    const lines = bodyLines(read(m, `${T}/trace`));
    const fns = lines.map(l => FN_LINE.exec(l)).filter(x => x !== null);
    assert.deepEqual(fns.map(x => `${x[4]} <-${x[5]}`).sort(), ['kstrtouint <-match_uint', 'kstrtouint <-test_kstrtox', 'kstrtouint <-test_kstrtox'], lines.join('\n'));
    assert.equal(lines.filter(l => / kp: \(kstrtouint\+0x0\/0x[0-9a-f]+\)$/.test(l)).length, 3, lines.join('\n'));
    assert.ok(m.printkRecords.some(r => r.text.includes('lib_selftest: ') && / 0 failed/.test(r.text)));
    // nop: the call site is the image's `call __fentry__` again once the probe is gone too
    assert.equal(write(m, `${T}/current_tracer`, 'nop\n'), 4);
    assert.ok(write(m, `${T}/events/kprobes/kp/enable`, '0\n') > 0);
    assert.deepEqual(m.kernel.mem.readBytes(mustVAddr(img.symbols.lookup('kstrtouint')!.value), 5), before);
  });

  test('stack tracer: kernel.stack_tracer_enabled, stack_trace_filter, stack_max_size and stack_trace', () => {
    const m = new Machine(image('x86_64'));
    assert.equal(read(m, '/proc/sys/kernel/stack_tracer_enabled'), '0\n');
    assert.equal(read(m, `${T}/stack_trace_filter`), '#### all functions enabled ####\n');
    assert.equal(write(m, `${T}/stack_trace_filter`, 'kstrtouint\n'), 11);
    assert.equal(read(m, `${T}/stack_max_size`), '0\n');
    assert.ok(write(m, '/proc/sys/kernel/stack_tracer_enabled', '1\n') > 0);
    m.run();
    const max = Number(read(m, `${T}/stack_max_size`));
    assert.ok(max > 0 && max < 0x10000, `stack_max_size ${max}`);
    const st = read(m, `${T}/stack_trace`).split('\n').filter(Boolean);
    const n = st.length - 2;
    assert.equal(st[0], `        Depth    Size   Location    (${n} entries)`);
    assert.equal(st[1], '        -----    ----   --------');
    const rows = st.slice(2).map(l => /^ {0,2}(\d+)\) +(\d+) +(\d+) {3}(\S+)$/.exec(l));
    assert.ok(rows.every(r => r), st.join('\n'));
    assert.match(rows[0]![4], /^kstrtouint\+0x0\/0x[0-9a-f]+$/);
    assert.equal(Number(rows[0]![2]), max);
    // each depth is below the one before; the sizes are the differences
    rows.forEach((r, i) => {
      const depth = Number(r![2]), size = Number(r![3]);
      const next = i + 1 < rows.length ? Number(rows[i + 1]![2]) : 0;
      assert.equal(size, depth - next, st.join('\n'));
    });
    assert.ok(rows.some(r => /^(test_kstrtox|match_uint)\+0x/.test(r![4])), st.join('\n'));
    assert.equal(write(m, `${T}/stack_max_size`, '0\n'), 2);
    assert.equal(read(m, `${T}/stack_max_size`), '0\n');
  });
});

describe('no function tracer where the kernel has no call sites (aarch64, riscv64)', () => {
  for (const arch of ['aarch64', 'riscv64']) {
    test(`${arch}: available_tracers is nop, current_tracer takes only nop, no filter or stack tracer files`, () => {
      const m = new Machine(image(arch));
      assert.equal(read(m, `${T}/available_tracers`), 'nop\n');
      assert.equal(write(m, `${T}/current_tracer`, 'function\n'), -22);
      // as a Linux without CONFIG_DYNAMIC_FTRACE: no filter files (kprobe_eventname.tc then picks a .isra function from kallsyms alone)
      for (const f of ['available_filter_functions', 'set_ftrace_filter', 'set_ftrace_notrace', 'stack_trace_filter', 'stack_trace', 'stack_max_size']) {
        assert.ok(!exists(m, `${T}/${f}`), f);
      }
      assert.ok(!exists(m, '/proc/sys/kernel/stack_tracer_enabled'));
    });
  }
});
