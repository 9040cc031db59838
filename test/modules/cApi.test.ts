/**
 * The kprobes documentation's C samples as modules of the x86_64 sample
 * kernel (they must run as they do on Linux):
 * examples/modules/kprobe_example.c and kretprobe_example.c, built against
 * examples/include/linux/*.h, call register_kprobe / register_kretprobe from
 * their init; their C handlers run on the probed CPU with a struct pt_regs; a
 * .kprobe snippet on the same address makes one aggregate with the C probe;
 * the exit unregisters.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';
import { probesOf } from '../../emulator/probes/attach';

let ARCH = 'x86_64';
const KERNEL = (): string => repoPath('examples', 'kernel', 'build', `kernel-${ARCH}.elf`);
const MOD = (n: string): string => repoPath('examples', 'modules', 'build', `${n}-${ARCH}.ko`);

function boot(): { m: Machine; log: string[] } {
  const m = new Machine(loadElf(KERNEL()), { cpus: 2 });
  const log: string[] = [];
  m.onPrintk(r => log.push(r.text));
  return { m, log };
}

function runUntil(m: Machine, cond: () => boolean, what: string): void {
  for (let i = 0; i < 400 && !cond(); i++) {
    const r = m.runSlice(10_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.ok(cond(), `never happened: ${what}`);
}

for (const arch of ['x86_64', 'aarch64', 'riscv64']) describe(`the documentation's C kprobe modules (${arch})`, () => {
  const at = (): void => { ARCH = arch; };
  test('kprobe_example: planted from init, C pre/post handlers see pt_regs (ip = addr + 1 after int3), unregistered by exit', () => {
    at();
    const { m, log } = boot();
    const mod = m.modules.load(new Uint8Array(readFileSync(MOD('kprobe_example'))), MOD('kprobe_example'));
    const doFork = m.kernel.image.symbols.lookup('do_fork')!.value;
    runUntil(m, () => mod.state === 'live', 'init');
    assert.ok(log.includes(`Planted kprobe at 0x${doFork.toString(16)}`), log.join('\n'));
    runUntil(m, () => log.some(l => l.startsWith('post_handler')), 'a hit');
    const pre = log.find(l => l.startsWith('pre_handler'))!;
    // regs->ip as a pre_handler sees it: past the int3 on x86, the breakpoint itself on arm64 and riscv
    const ip = arch === 'x86_64' ? doFork + 1n : doFork;
    assert.match(pre, new RegExp(`^pre_handler: p->addr=0x${doFork.toString(16)}, ip=${ip.toString(16)}$`));
    // the probe is the engine's: listed, with the C handlers' module as their owner's symbols
    assert.match(probesOf(m).debugfsList(), new RegExp(`^${doFork.toString(16).padStart(16, '0')} {2}k {2}do_fork\\+0x0 `, 'm'));
    assert.equal(m.modules.unload('kprobe_example'), undefined);
    runUntil(m, () => m.modules.get('kprobe_example') === undefined, 'unloaded');
    assert.ok(log.includes(`kprobe at 0x${doFork.toString(16)} unregistered`));
    assert.equal(probesOf(m).debugfsList(), '');
    const pres = log.filter(l => l.startsWith('pre_handler')).length;
    assert.equal(log.filter(l => l.startsWith('post_handler')).length, pres);
    assert.equal(m.run().reason, 'poweroff');
  });

  test('a C probe and a .kprobe snippet on do_fork are one aggregate: both run on every hit; rmmod leaves the snippet', () => {
    at();
    const { m, log } = boot();
    const mod = m.modules.load(new Uint8Array(readFileSync(MOD('kprobe_example'))), MOD('kprobe_example'));
    runUntil(m, () => mod.state === 'live', 'init');
    const start = log.length;
    const r = probesOf(m).addProbeFile('kprobe do_fork { pre { printk("snippet pre\\n"); } }', 'agg.kprobe');
    assert.deepEqual(r.errors, []);
    const addr = m.kernel.image.symbols.lookup('do_fork')!.value;
    assert.equal(m.kprobes.probes.probesAt(addr).length, 2);
    runUntil(m, () => log.filter(l => l === 'snippet pre').length >= 3, 'three hits');
    const order = log.slice(start).filter(l => l === 'snippet pre' || l.startsWith('pre_handler'));
    // add_new_kprobe: a probe without post_handler goes to the head of the aggregate's list, so the snippet runs first
    for (let i = 0; i + 1 < order.length; i += 2) assert.deepEqual([order[i].slice(0, 3), order[i + 1].slice(0, 3)], ['sni', 'pre']);
    m.modules.unload('kprobe_example');
    runUntil(m, () => m.modules.get('kprobe_example') === undefined, 'unloaded');
    assert.equal(m.kprobes.probes.probesAt(addr).length, 1);
    const before = log.filter(l => l === 'snippet pre').length;
    m.run();
    assert.ok(log.filter(l => l === 'snippet pre').length > before, 'the snippet goes on after the module left');
  });

  test('jprobe_example: the C entry gets do_fork\'s arguments and ends with jprobe_return(); do_fork runs on unchanged', () => {
    at();
    const { m, log } = boot();
    const mod = m.modules.load(new Uint8Array(readFileSync(MOD('jprobe_example'))), MOD('jprobe_example'));
    runUntil(m, () => mod.state === 'live', 'init');
    assert.ok(log.some(l => /^Planted jprobe at 0x[0-9a-f]+, handler addr 0x[0-9a-f]+$/.test(l)), log.join('\n'));
    m.run();
    const lines = log.filter(l => l.startsWith('jprobe: clone_flags'));
    assert.ok(lines.length > 10);
    for (const l of lines) assert.match(l, /^jprobe: clone_flags = 0x(11|711), stack_size = 0x(0|2000), regs = 0x0x0$/);
    // the kernel's own output is what it is without the probe (the handlers' time may reorder the CPUs' lines)
    const plain = boot();
    plain.m.run();
    const strip = (xs: string[]): string[] => xs.filter(l => !l.startsWith('jprobe') && !l.startsWith('Planted')).sort();
    assert.deepEqual(strip(log), strip(plain.log));
  });

  // the fixture is built for x86_64
  if (arch === 'x86_64') test('a module unloaded with its kprobe still registered: the documentation\'s warning, and the next hit oopses naming the module', () => {
    at();
    const { m, log } = boot();
    const path = repoPath('test', 'fixtures', 'modules', 'bin', 'leaky-x86_64-clang.ko');
    const mod = m.modules.load(new Uint8Array(readFileSync(path)), path);
    runUntil(m, () => mod.state === 'live', 'init');
    runUntil(m, () => log.includes('leaky: pre'), 'a hit');
    m.modules.unload('leaky');
    runUntil(m, () => m.modules.get('leaky') === undefined, 'unloaded');
    assert.ok(log.includes('kprobe-debug: module leaky unloaded with its kprobe at do_fork+0x0 still registered: '
      + 'its handlers and struct are freed memory (unregister probes in module_exit)'), log.slice(-4).join('\n'));
    m.run();
    assert.ok(log.some(l => /^executing freed memory of module leaky \(unloaded\) at 0x[0-9a-f]+/.test(l)), log.slice(-8).join('\n'));
    assert.ok(m.kernel.oopsCount >= 1);
  });

  test('test_kprobes (a kprobes self-test module): kprobe, two kprobes, kretprobe, jprobe on its own functions — its lines say it passed', () => {
    at();
    const { m, log } = boot();
    const mod = m.modules.load(new Uint8Array(readFileSync(MOD('test_kprobes'))), MOD('test_kprobes'));
    runUntil(m, () => mod.state === 'live', 'init');
    assert.ok(log.includes('test_kprobes: started'));
    assert.ok(log.includes('test_kprobes: passed 11 tests with no errors'), log.filter(l => l.startsWith('test_kprobes')).join('\n'));
    assert.equal(probesOf(m).debugfsList(), '', 'it unregistered everything');
  });

  test('kretprobe_example: entry_handler stamps the instance data, the return handler logs sys_open\'s value; exit reports nmissed', () => {
    at();
    const { m, log } = boot();
    const mod = m.modules.load(new Uint8Array(readFileSync(MOD('kretprobe_example'))), MOD('kretprobe_example'));
    runUntil(m, () => mod.state === 'live', 'init');
    assert.ok(log.some(l => /^Planted return probe at sys_open: 0x[0-9a-f]+$/.test(l)), log.join('\n'));
    runUntil(m, () => log.filter(l => l.startsWith('sys_open returned')).length >= 5, 'five returns');
    for (const l of log.filter(x => x.startsWith('sys_open returned'))) assert.match(l, /^sys_open returned -?\d+ \(entry stamp 1\)$/);
    assert.ok(log.some(l => l === 'sys_open returned -2 (entry stamp 1)'), 'the selftest\'s open of a missing file');
    m.modules.unload('kretprobe_example');
    runUntil(m, () => m.modules.get('kretprobe_example') === undefined, 'unloaded');
    assert.ok(log.includes('Missed probing 0 instances of sys_open'), log.slice(-5).join('\n'));
    assert.equal(m.run().reason, 'poweroff');
  });
});
