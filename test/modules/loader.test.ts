/**
 * Loadable modules in the sample x86_64 kernel (the loader itself, the first
 * step toward C modules that use kprobes): objects built by clang and gcc
 * (test/fixtures/modules/build.sh) are laid out, their symbols resolved
 * against the kernel's and other modules', relocated, their init run in an
 * "insmod" kernel thread and their exit in "rmmod"; module symbols print as
 * `sym+0xoff [mod]`; kprobes on module code become [GONE] at unload and on
 * __init code when init memory is freed; bad modules are one clear error
 * each, the kernel intact.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import type { Kprobe } from '../../emulator/kprobes';
import { KPROBE_FLAG_GONE } from '../../emulator/kprobes';
import { repoPath } from '../util/paths';
import { probesOf } from '../../emulator/probes/attach';

const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const MOD = (name: string, cc: string): string => repoPath('test', 'fixtures', 'modules', 'bin', `${name}-x86_64-${cc}.ko`);
const CLI = repoPath('dist', 'cli.js');

function boot(): { m: Machine; log: string[] } {
  const m = new Machine(loadElf(KERNEL), { cpus: 2 });
  const log: string[] = [];
  m.onPrintk(r => log.push(r.text));
  return { m, log };
}
const load = (m: Machine, name: string, cc: string, done?: (e: string | null) => void) =>
  m.modules.load(new Uint8Array(readFileSync(MOD(name, cc))), MOD(name, cc), [], done);

/** run until `cond` holds (bounded) */
function runUntil(m: Machine, cond: () => boolean, what: string): void {
  for (let i = 0; i < 400 && !cond(); i++) {
    const r = m.runSlice(20_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.ok(cond(), `never happened: ${what}`);
}

for (const cc of ['clang', 'gcc']) {
  describe(`modules built by ${cc} in the x86_64 sample kernel`, () => {
    test('insmod: init runs (printk through the kernel), __init memory freed, symbols as sym+0xoff [mod]; rmmod runs exit', () => {
      const { m, log } = boot();
      let initDone: string | null | undefined;
      const mod = load(m, 'hello', cc, e => { initDone = e; });
      assert.equal(mod.name, 'hello');
      assert.equal(mod.state, 'coming');
      const helper = m.kernel.image.symbols.lookup('hello_helper');
      assert.ok(helper && helper.module === 'hello');
      assert.equal(m.kernel.image.symbols.format(helper.value + 4n), 'hello_helper+0x4 [hello]');
      runUntil(m, () => initDone !== undefined, 'init returned');
      assert.equal(initDone, null);
      assert.equal(mod.state, 'live');
      assert.ok(log.includes('hello: init two 25'), log.join('\n'));
      // __init code is freed: its symbols are gone, touching it would oops
      assert.equal(mod.initFreed, true);
      assert.equal(m.kernel.image.symbols.lookup('hello_setup'), undefined);
      let exitDone: string | null | undefined;
      assert.equal(m.modules.unload('hello', e => { exitDone = e; }), undefined);
      runUntil(m, () => exitDone !== undefined, 'exit returned');
      assert.ok(log.includes('hello: exit counter=5 helper=7'), log.join('\n'));
      assert.equal(m.modules.get('hello'), undefined);
      assert.equal(m.kernel.image.symbols.lookup('hello_helper'), undefined);
      assert.equal(m.run().reason, 'poweroff');
    });

    test('kprobes on module code: hit while loaded, [GONE] after unload (listed until unregistered); on __init code [GONE] once init memory is freed', () => {
      const { m } = boot();
      load(m, 'hello', cc);
      const hits: string[] = [];
      const onHelper: Kprobe = { symbol_name: 'hello_helper', pre_handler: () => { hits.push('helper'); return 0; } };
      const onSetup: Kprobe = { symbol_name: 'hello_setup', pre_handler: () => { hits.push('setup'); return 0; } };
      assert.equal(m.kprobes.registerKprobe(onHelper), 0);
      assert.equal(m.kprobes.registerKprobe(onSetup), 0);
      assert.match(probesOf(m).debugfsList(), /k {2}hello_helper\+0x0 {2}hello \n/);
      runUntil(m, () => m.modules.get('hello')?.state === 'live', 'init done');
      assert.deepEqual(hits, ['setup', 'helper']);
      assert.ok(((onSetup.flags ?? 0) & KPROBE_FLAG_GONE) !== 0, 'the probe on __init code is gone');
      assert.equal((onHelper.flags ?? 0) & KPROBE_FLAG_GONE, 0);
      m.modules.unload('hello');
      runUntil(m, () => m.modules.get('hello') === undefined, 'unloaded');
      assert.deepEqual(hits, ['setup', 'helper', 'helper'], 'exit called the helper once more');
      assert.ok(((onHelper.flags ?? 0) & KPROBE_FLAG_GONE) !== 0);
      const list = probesOf(m).debugfsList();
      assert.equal(list.split('\n').filter(l => l.endsWith('[GONE]')).length, 2, list);
      assert.equal(m.kprobes.enableKprobe(onHelper), -22, 'a gone probe cannot be enabled');
      m.kprobes.unregisterKprobe(onHelper);
      m.kprobes.unregisterKprobe(onSetup);
      assert.equal(probesOf(m).debugfsList(), '');
      assert.equal(m.run().reason, 'poweroff');
    });

    test('dependencies and refusals: a user of hello\'s symbol pins it; no exit: not removable; init error: not loaded', () => {
      const { m, log } = boot();
      load(m, 'hello', cc);
      const user = load(m, 'user', cc);
      assert.deepEqual([...user.uses].map(x => x.name), ['hello']);
      runUntil(m, () => user.state === 'live', 'user live');
      assert.ok(log.includes('user: helper(3)=11'), log.join('\n'));
      assert.equal(m.modules.unload('hello'), 'ERROR: Module hello is in use by: user');
      assert.throws(() => load(m, 'hello', cc), /hello: module is already loaded \(File exists, err -17\)/);
      const noexit = load(m, 'noexit', cc);
      runUntil(m, () => noexit.state === 'live', 'noexit live');
      assert.match(m.modules.unload('noexit') ?? '', /Module noexit has no exit function and cannot be removed/);
      let bad: string | null | undefined;
      load(m, 'badinit', cc, e => { bad = e; });
      runUntil(m, () => bad !== undefined, 'badinit init');
      assert.equal(bad, 'badinit: init returned -19');
      assert.equal(m.modules.get('badinit'), undefined);
      assert.ok(log.includes('badinit: module init returned -19: not loaded'));
      assert.throws(() => load(m, 'unknown', cc), /unknown: Unknown symbol no_such_function \(err -2\)/);
      assert.equal(m.modules.get('unknown'), undefined);
      assert.equal(m.run().reason, 'poweroff', 'the kernel is intact');
    });
  });
}

describe('module parameters (module_param)', () => {
  test('int, long, bool and charp values given at load reach the module\'s variables; an unknown name is ignored; a bad value refuses the module', () => {
    const { m, log } = boot();
    const path = repoPath('test', 'fixtures', 'modules', 'bin', 'params-x86_64-clang.ko');
    const bytes = new Uint8Array(readFileSync(path));
    assert.throws(() => m.modules.load(bytes, path, ['count=x']), /params: `x' invalid for parameter `count' \(Invalid argument, err -22\)/);
    assert.equal(m.modules.get('params'), undefined);
    const mod = m.modules.load(bytes, path, ['count=7', 'big=-5', 'verbose=y', 'who=alice', 'nope=1']);
    runUntil(m, () => mod.state === 'live', 'init');
    assert.ok(log.includes("params: unknown parameter 'nope' ignored"));
    assert.ok(log.includes('params: count=7 big=-5 verbose=1 who=alice'), log.join('\n'));
    assert.deepEqual([...mod.params], [['count', '7'], ['big', '-5'], ['verbose', 'y'], ['who', 'alice'], ['nope', '1']]);
  });
});

describe('bad module files', () => {
  test('a truncated object, an executable, an object for another arch: one clear error each', () => {
    const { m } = boot();
    const hello = new Uint8Array(readFileSync(MOD('hello', 'gcc')));
    assert.throws(() => m.modules.load(hello.subarray(0, 200), 'trunc.ko'), /trunc\.ko: .*(truncated|outside|extends past)/i);
    assert.throws(() => m.modules.load(new Uint8Array(readFileSync(KERNEL)), 'kernel.ko'), /kernel\.ko: not a relocatable object \(e_type 2/);
    const rv = repoPath('test', 'fixtures', 'modules', 'bin', 'noexit-riscv64-clang.ko');
    assert.throws(() => m.modules.load(new Uint8Array(readFileSync(rv)), rv), /module for riscv64, and this kernel is x86_64 \(Exec format error, err -8\)/);
    assert.equal(m.modules.list().length, 0);
  });
});

describe('kprobe-run --module / --rmmod-at', () => {
  test('the module loads after boot, its probes list with the module name, rmmod makes them [GONE]', () => {
    const probes = repoPath('test', 'fixtures', 'modules', 'hello.kprobe');
    // --module before --probes: the module's symbols exist when the probe registers
    const r = spawnSync(process.execPath, [CLI, 'run', KERNEL, '--module', MOD('hello', 'clang'), '--probes', probes,
      '--rmmod-at', '400000:hello', '--list'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^hello: init two 25$/m);
    assert.match(r.stdout, /^hello_helper\(10\) from the module$/m);
    assert.match(r.stdout, /^hello: exit counter=5 helper=7$/m);
    assert.match(r.stderr, /kprobe-run: at \d+ instructions: rmmod hello\n/);
    assert.match(r.stdout, /# cat \/sys\/kernel\/debug\/kprobes\/list\n[0-9a-f]{16} {2}k {2}0x[0-9a-f]+ \[GONE\]\n/);
    assert.match(r.stdout, /hello\.kprobe:2:1 kprobe hello_helper: 2 hits, 0 missed \[GONE\]\n/);
  });
});
