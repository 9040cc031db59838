/**
 * The image's exported symbols and delete_module() (modules as on Linux):
 *
 * - EXPORT_SYMBOL / EXPORT_SYMBOL_GPL (examples/kernel/kernel.h) fill the
 *   sample images' __ksymtab / __ksymtab_gpl; a module's undefined symbols
 *   resolve against them (and the kprobes C API) only: an unexported
 *   global is Linux's "Unknown symbol X (err -2)", a GPL-only export is
 *   refused to a module whose license is not GPL-compatible. An image
 *   without __ksymtab exports every global (the behaviour before exports).
 * - delete_module(name, flags) (<linux/module.h>, the DeleteModule
 *   hypercall) from a module's init: Linux's return codes, and the same
 *   unload as rmmod (kprobe-run --rmmod-at): exit in an "rmmod" thread,
 *   probes on the module [GONE].
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import type { Kprobe } from '../../emulator/kprobes';
import { KPROBE_FLAG_GONE } from '../../emulator/kprobes';
import { readKsymtab } from '../../emulator/kernel/modules/exports';
import type { ElfImage } from '../../emulator/elf/types';
import { repoPath } from '../util/paths';
import { probesOf } from '../../emulator/probes/attach';

const KERNEL = (arch: string): string => repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);
const MOD = (name: string, cc = 'clang'): string => repoPath('test', 'fixtures', 'modules', 'bin', `${name}-x86_64-${cc}.ko`);
const CLI = repoPath('dist', 'cli.js');

function boot(image: ElfImage = loadElf(KERNEL('x86_64'))): { m: Machine; log: string[] } {
  const m = new Machine(image, { cpus: 2 });
  const log: string[] = [];
  m.onPrintk(r => log.push(r.text));
  return { m, log };
}
const load = (m: Machine, name: string, params: string[] = [], cc = 'clang', done?: (e: string | null) => void) =>
  m.modules.load(new Uint8Array(readFileSync(MOD(name, cc))), MOD(name, cc), params, done);
/** the error a load throws (its message), or undefined */
function loadError(m: Machine, name: string): string | undefined {
  try { load(m, name); } catch (e) { return e instanceof Error ? e.message : String(e); }
  return undefined;
}
function runUntil(m: Machine, cond: () => boolean, what: string): void {
  for (let i = 0; i < 400 && !cond(); i++) {
    const r = m.runSlice(20_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.ok(cond(), `never happened: ${what}`);
}

describe('EXPORT_SYMBOL: the image\'s __ksymtab', () => {
  for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
    test(`${arch}: exports name the image's symbols; GPL-only ones recorded as such; private globals absent`, () => {
      const image = loadElf(KERNEL(arch));
      const ex = readKsymtab(image);
      assert.ok(ex, 'the sample image has a __ksymtab');
      for (const [name, gplOnly] of [['printk', false], ['memset', false], ['strlen', false], ['boot_counter', false],
        ['vfs_read', false], ['sys_open', true], ['notify_die', true]] as const) {
        const e = ex.get(name);
        assert.ok(e, `${name} exported`);
        assert.equal(e.value, image.symbols.lookup(name)?.value, `${name}'s address`);
        assert.equal(e.gplOnly, gplOnly, `${name} GPL-only`);
      }
      for (const name of ['last_failed_open', 'fib', 'fib_last_leaf', 'tcp_v4_rcv']) assert.equal(ex.get(name), undefined, `${name} not exported`);
    });
  }

  test('a module using exported functions and an exported variable (and a GPL-only one, being GPL) loads and runs', () => {
    const { m, log } = boot();
    const mod = load(m, 'exports');
    runUntil(m, () => mod.state === 'live', 'init');
    assert.ok(log.some(l => /^exports: strlen=6 boot_counter=\d+ notify_die=1$/.test(l)), log.join('\n'));
    assert.equal(m.run().reason, 'poweroff');
  });

  test('an unexported global of the image is refused with Linux\'s line; nothing is loaded', () => {
    const { m } = boot();
    assert.equal(loadError(m, 'unexported'), 'unexported: Unknown symbol last_failed_open (err -2)');
    assert.equal(m.modules.get('unexported'), undefined);
    assert.equal(m.run().reason, 'poweroff', 'the kernel is intact');
  });

  test('an EXPORT_SYMBOL_GPL symbol is refused to a non-GPL module (Unknown symbol, as Linux)', () => {
    const { m } = boot();
    assert.equal(loadError(m, 'proprietary'), 'proprietary: Unknown symbol notify_die (err -2)');
    assert.equal(m.modules.get('proprietary'), undefined);
  });

  test('the existing modules still resolve (printk, other modules\' symbols, the kprobes C API)', () => {
    const { m, log } = boot();
    load(m, 'hello', [], 'gcc');
    const user = load(m, 'user', [], 'gcc');
    const leaky = load(m, 'leaky');
    runUntil(m, () => user.state === 'live' && leaky.state === 'live', 'inits');
    assert.ok(log.includes('user: helper(3)=11'), log.join('\n'));
  });

  test('an image without __ksymtab exports every global symbol (the behaviour before exports)', () => {
    const image = loadElf(KERNEL('x86_64'));
    const section = image.section.bind(image);
    image.section = (name: string) => (name.startsWith('__ksymtab') ? undefined : section(name));
    assert.equal(readKsymtab(image), null);
    const { m, log } = boot(image);
    const mod = load(m, 'unexported');
    runUntil(m, () => mod.state === 'live', 'init');
    assert.ok(log.some(l => l.startsWith('unexported: ')), log.join('\n'));
    const prop = load(m, 'proprietary');
    runUntil(m, () => prop.state === 'live', 'init');
  });
});

describe('delete_module() from a kernel thread (the DeleteModule hypercall)', () => {
  test('0 for a removable module, -ENOENT unknown, -EBUSY for itself (init running) and for a module being removed; the victim\'s exit then runs', () => {
    const { m, log } = boot();
    load(m, 'hello', [], 'gcc');
    const user = load(m, 'user', [], 'gcc');
    const remover = load(m, 'remover', ['victim=user']);
    runUntil(m, () => remover.state === 'live' && m.modules.get('user') === undefined, 'remover init, user removed');
    assert.ok(log.includes('remover: unknown=-2 self=-16 user=0 again=-16'), log.join('\n'));
    assert.ok(log.includes('user: exit'), 'user\'s exit ran');
    assert.equal(user.state, 'unloaded');
    assert.equal(m.modules.get('hello')?.state, 'live');
    assert.equal(m.kernel.image.symbols.lookup('hello_helper')?.module, 'hello');
  });

  test('-EWOULDBLOCK (-11) while another module uses it; -EBUSY (-16) without an exit function', () => {
    const { m, log } = boot();
    load(m, 'hello', [], 'gcc');
    load(m, 'user', [], 'gcc');
    const r1 = load(m, 'remover', ['victim=hello']);
    runUntil(m, () => r1.state === 'live', 'remover init');
    assert.ok(log.includes('remover: unknown=-2 self=-16 hello=-11 again=-11'), log.join('\n'));
    assert.equal(m.modules.get('hello')?.state, 'live');
    assert.equal(m.modules.unload('remover'), undefined);
    runUntil(m, () => m.modules.get('remover') === undefined, 'remover removed');
    assert.ok(log.includes('remover: exit'));
    const b = boot();
    const noexit = load(b.m, 'noexit', [], 'gcc');
    const r2 = load(b.m, 'remover', ['victim=noexit']);
    runUntil(b.m, () => r2.state === 'live', 'remover init');
    assert.ok(b.log.includes('remover: unknown=-2 self=-16 noexit=-16 again=-16'), b.log.join('\n'));
    assert.equal(noexit.state, 'live');
  });

  test('the same unload as rmmod: exit output, symbols gone, probes on the module [GONE], the probe list identical', () => {
    const run = (how: 'hypercall' | 'rmmod'): { log: string[]; list: string; flags: number } => {
      const { m, log } = boot();
      const hello = load(m, 'hello', [], 'gcc');
      const probe: Kprobe = { symbol_name: 'hello_helper', pre_handler: () => 0 };
      assert.equal(m.kprobes.registerKprobe(probe), 0);
      runUntil(m, () => hello.state === 'live', 'hello live');
      if (how === 'hypercall') load(m, 'remover', ['victim=hello']);
      else assert.equal(m.modules.unload('hello'), undefined);
      runUntil(m, () => m.modules.get('hello') === undefined, 'hello removed');
      assert.equal(hello.state, 'unloaded');
      assert.equal(m.kernel.image.symbols.lookup('hello_helper'), undefined);
      return { log: log.filter(l => l.startsWith('hello:')), list: probesOf(m).debugfsList(), flags: probe.flags ?? 0 };
    };
    const viaHypercall = run('hypercall');
    const viaRmmod = run('rmmod');
    assert.ok(viaHypercall.log.includes('hello: exit counter=5 helper=7'), viaHypercall.log.join('\n'));
    assert.deepEqual(viaHypercall.log, viaRmmod.log);
    assert.ok((viaHypercall.flags & KPROBE_FLAG_GONE) !== 0);
    assert.equal(viaHypercall.flags, viaRmmod.flags);
    assert.match(viaHypercall.list, /\[GONE\]/);
    assert.equal(viaHypercall.list, viaRmmod.list);
  });

  test('kprobe-run: a module unloading another gives the [GONE] lines --rmmod-at gives', () => {
    const probes = repoPath('test', 'fixtures', 'modules', 'hello.kprobe');
    const cli = (extra: string[]) => {
      const r = spawnSync(process.execPath, [CLI, 'run', KERNEL('x86_64'), '--module', MOD('hello'), '--probes', probes, ...extra, '--list'], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      return r.stdout;
    };
    const gone = (out: string): string[] => out.split('\n').filter(l => l.includes('[GONE]') || /^hello: /.test(l));
    const viaRmmod = cli(['--rmmod-at', '400000:hello']);
    const viaHypercall = cli(['--module', `${MOD('remover')} victim=hello`]);
    assert.match(viaHypercall, /^remover: unknown=-2 self=-16 hello=0 again=-16$/m);
    assert.ok(gone(viaRmmod).some(l => l.includes('[GONE]')), viaRmmod);
    assert.deepEqual(gone(viaHypercall), gone(viaRmmod));
  });
});
