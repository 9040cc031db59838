/**
 * A module's own kprobe blacklist, as Linux 6.1's kprobes module notifier
 * keeps it (add_module_kprobe_blacklist as the module comes,
 * remove_module_kprobe_blacklist as it goes): the module
 * test/modules/g4b-blacklist/g4b_blacklist.c, built at test time with the
 * headers' Kbuild, marks one function NOKPROBE_SYMBOL, two __kprobes, one
 * noinstr; its init registers a kprobe on each and on a plain function.
 * Linux answers -EINVAL (-22) for the first four and 0 for the plain one,
 * and /sys/kernel/debug/kprobes/blacklist lists the four after the
 * kernel's, "0x%px-0x%px\t%ps" with %ps of a module symbol "fn [mod]"; the
 * entries go with rmmod.
 * And the kernel command line (MachineOptions.cmdline): the module's %p
 * of a function is Linux's hash of it, or the raw address with
 * no_hash_pointers; %px is raw either way.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine, MachineOptions } from '../../emulator/machine';
import { openPseudo } from '../../emulator/kernel/fs/pseudo';
import { hashPointer, ptrKey } from '../../emulator/kernel/printk';
import type { KernelModule } from '../../emulator/kernel/modules/modules';
import { repoPath } from '../util/paths';
import { KBUILD_ARCHES, builtModule, kbuild, unavailable } from './kbuild';

const KERNEL = (arch: string): string => repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);
const SRC = repoPath('test', 'modules', 'g4b-blacklist');
const NAME = 'g4b_blacklist';
const BLACKLISTED = ['g4b_nokprobe', 'g4b_kprobes_a', 'g4b_kprobes_b', 'g4b_noinstr'];

const built = new Map<string, string>();
function moduleFor(t: { skip(msg: string): void }, arch: string): Uint8Array | undefined {
  let ko = built.get(arch);
  if (!ko) {
    const b = kbuild(SRC, arch);
    if ('missing' in b) { unavailable(t, b.missing); return undefined; }
    ko = builtModule(b.out, NAME);
    built.set(arch, ko);
  }
  return new Uint8Array(readFileSync(ko));
}

function boot(arch: string, opts: MachineOptions = {}): { m: Machine; log: string[] } {
  const m = new Machine(loadElf(KERNEL(arch)), { cpus: 1, ...opts });
  const log: string[] = [];
  m.onPrintk(r => log.push(r.text));
  return { m, log };
}

function runUntil(m: Machine, cond: () => boolean, what: string, log: readonly string[]): void {
  for (let i = 0; i < 400 && !cond(); i++) {
    const r = m.runSlice(10_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.ok(cond(), `never happened: ${what}\n${log.slice(-20).join('\n')}`);
}

function insmod(arch: string, bytes: Uint8Array, opts: MachineOptions = {}): { m: Machine; log: string[]; mod: KernelModule } {
  const { m, log } = boot(arch, opts);
  const mod = m.modules.load(bytes, `${NAME}.ko`);
  runUntil(m, () => mod.state === 'live' || mod.state === 'unloaded', 'the init ran', log);
  assert.equal(mod.state, 'live', log.join('\n'));
  return { m, log, mod };
}

function readBlacklist(m: Machine): string[] {
  const r = m.kernel.fs.lookup('/sys/kernel/debug/kprobes/blacklist', m.kernel.fs.root);
  assert.ok(r.ok && r.inode.pseudo);
  const dev = openPseudo(r.inode.pseudo, 0);
  assert.ok(typeof dev !== 'number');
  return new TextDecoder().decode(dev.read(1 << 20) as Uint8Array).split('\n').slice(0, -1);
}

const symbolOf = (mod: KernelModule, name: string): bigint => {
  const s = mod.symbols.find(x => x.name === name);
  assert.ok(s, `${name} is a symbol of the module`);
  return s.value;
};
const px = (v: bigint): string => v.toString(16).padStart(16, '0');

for (const arch of KBUILD_ARCHES) describe(`a module's kprobe blacklist and the kernel command line (${arch})`, () => {
  test('register_kprobe on NOKPROBE_SYMBOL, __kprobes and noinstr functions of the module is -EINVAL; a plain one is 0', t => {
    const bytes = moduleFor(t, arch);
    if (!bytes) return;
    const { log } = insmod(arch, bytes);
    for (const f of BLACKLISTED) assert.ok(log.includes(`${NAME}: ${f}: register_kprobe -22`), `${f}\n${log.join('\n')}`);
    assert.ok(log.includes(`${NAME}: g4b_plain: register_kprobe 0`), log.join('\n'));
  });

  test('debugfs kprobes/blacklist lists the module\'s entries as "fn [mod]" after the kernel\'s, in Linux\'s order; rmmod takes them away', t => {
    const bytes = moduleFor(t, arch);
    if (!bytes) return;
    const { m, log, mod } = insmod(arch, bytes);
    const before = boot(arch).m;
    const kernelLines = readBlacklist(before);
    const lines = readBlacklist(m);
    assert.deepEqual(lines.slice(0, kernelLines.length), kernelLines, 'the kernel\'s entries first, unchanged');
    const own = lines.slice(kernelLines.length);
    // the _kprobe_blacklist entry, then .kprobes.text symbol by symbol, then .noinstr.text
    assert.deepEqual(own.map(l => l.split('\t')[1]), BLACKLISTED.map(f => `${f} [${NAME}]`), own.join('\n'));
    const textEnd = mod.core.hi;
    for (const l of own) {
      const mm = /^0x([0-9a-f]{16})-0x([0-9a-f]{16})\t(\S+) \[g4b_blacklist\]$/.exec(l);
      assert.ok(mm, JSON.stringify(l));
      const start = BigInt(`0x${mm[1]}`), end = BigInt(`0x${mm[2]}`);
      const sym = mod.symbols.find(s => s.name === mm[3]);
      assert.ok(sym);
      assert.equal(start, sym.value, `${mm[3]} starts at its symbol`);
      // kallsyms' size of a module symbol: up to the next symbol, at least the function
      assert.ok(end >= sym.value + sym.size && end <= textEnd, `${l}: ends at or after its last byte (size 0x${sym.size.toString(16)})`);
      assert.ok(!mod.symbols.some(s => s.value > start && s.value < end), `${l}: no other symbol inside`);
    }
    // the __kprobes area walked symbol after symbol: the second entry starts where the first ends
    assert.equal(own[2].slice(2, 18), own[1].slice(21, 37), `${own[1]}\n${own[2]}`);
    assert.equal(m.modules.unload(NAME), undefined);
    runUntil(m, () => !m.modules.get(NAME), 'rmmod', log);
    assert.deepEqual(readBlacklist(m), kernelLines, 'only the kernel\'s entries after rmmod');
  });

  test('--cmdline: %p of a module function is its hash; with no_hash_pointers the raw address; %px raw either way', t => {
    const bytes = moduleFor(t, arch);
    if (!bytes) return;
    for (const cmdline of [undefined, '', 'quiet', 'quiet no_hash_pointers loglevel=7']) {
      const raw = cmdline?.split(' ').includes('no_hash_pointers') ?? false;
      const { log, mod } = insmod(arch, bytes, cmdline === undefined ? {} : { cmdline });
      const addr = symbolOf(mod, 'g4b_plain');
      const p = raw ? px(addr) : px(hashPointer(addr, ptrKey(0n)));
      assert.notEqual(raw, p !== px(addr), 'the hash differs from the address');
      assert.ok(log.includes(`${NAME}: g4b_plain at ${p} (${px(addr)})`), `${JSON.stringify(cmdline)} ${p}\n${log.join('\n')}`);
    }
  });

  test('a command line the kernel cannot take is refused with what is wrong', () => {
    const image = loadElf(KERNEL(arch));
    assert.throws(() => new Machine(image, { cmdline: 'quiet\nno_hash_pointers' }), /"cmdline" must be one line: "\\n" at column 6/);
    const max = arch === 'riscv64' ? 1023 : 2047;
    assert.throws(() => new Machine(image, { cmdline: 'x'.repeat(max + 1) }), new RegExp(`is ${max + 1} bytes; ${arch}'s COMMAND_LINE_SIZE allows ${max}`));
    new Machine(image, { cmdline: 'x'.repeat(max) });
  });
});
