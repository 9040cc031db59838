/**
 * register_kwatch from C (hardware watchpoints for modules):
 * examples/modules/kwatch_example.c takes a debug register from its init, its
 * C handler runs after each write to boot_counter with the struct kwatch and
 * pt_regs, rmmod gives the register back; on riscv64 (no debug registers) the
 * init gets -ENODEV and the module is not loaded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';

function boot(arch: string): { m: Machine; log: string[]; load: () => void } {
  const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`)), { cpus: 1 });
  const log: string[] = [];
  m.onPrintk(r => log.push(r.text));
  const path = repoPath('examples', 'modules', 'build', `kwatch_example-${arch}.ko`);
  return { m, log, load: () => { m.modules.load(new Uint8Array(readFileSync(path)), path); } };
}

function runUntil(m: Machine, cond: () => boolean, what: string): void {
  for (let i = 0; i < 400 && !cond(); i++) {
    const r = m.runSlice(10_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.ok(cond(), `never happened: ${what}`);
}

for (const arch of ['x86_64', 'aarch64']) {
  test(`${arch}: kwatch_example watches boot_counter from C and releases its register on rmmod`, () => {
    const { m, log, load } = boot(arch);
    load();
    const name = m.loadedModules()![0].name;
    const addr = m.kernel.image.symbols.lookup('boot_counter')!.value.toString(16);
    runUntil(m, () => log.some(l => l.startsWith('kwatch_example: watching')), 'init');
    assert.ok(log.includes(`kwatch_example: watching boot_counter at ${addr} with debug register 0`), log.join('\n'));
    runUntil(m, () => log.filter(l => / write at /.test(l)).length === 3, 'three writes');
    const writes = log.filter(l => / write at /.test(l));
    writes.forEach((l, i) => assert.match(l, new RegExp(`^kwatch_example: DR0 write at ${addr}, ip [0-9a-f]+, value now ${i + 1}$`)));
    // the ip is inside read_boot_counter, after the store
    const ip = BigInt(`0x${/ip ([0-9a-f]+)/.exec(writes[0])![1]}`);
    assert.equal(m.kernel.image.symbols.resolve(ip)?.sym.name, 'read_boot_counter');
    assert.equal(m.hwbp.list().length, 1);
    assert.equal(m.modules.unload(name), undefined);
    runUntil(m, () => m.modules.get(name) === undefined, 'unloaded');
    assert.equal(m.hwbp.list().length, 0, 'the register is free again');
    assert.match(log.find(l => l.includes('released after'))!, /^kwatch_example: debug register 0 released after \d+ writes$/);
  });
}

test('riscv64: register_kwatch from C returns -ENODEV; the module is not loaded', () => {
  const { m, log, load } = boot('riscv64');
  load();
  runUntil(m, () => log.some(l => l.startsWith('register_kwatch failed')), 'init');
  assert.ok(log.includes('register_kwatch failed, returned -19'));
  runUntil(m, () => (m.loadedModules() ?? []).length === 0, 'the failed module dropped');
});
