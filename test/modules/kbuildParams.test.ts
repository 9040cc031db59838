/**
 * Module parameters as Linux 6.1 defines and parses them: test/modules/
 * kbuild/modparams.c declares one of each kind <linux/moduleparam.h>
 * offers (int, ulong, short, bool, invbool under another name, charp,
 * module_param_string, hexint, byte), is built with the headers' Makefile
 * (Kbuild-like: its .modinfo names it, as modpost's .mod.c does) for each
 * arch, and is loaded with parameters: the values reach its variables
 * (kstrto*'s bases, a bool given without a value), its printk lines follow
 * Linux's vsprintf (arguments beyond the argument registers are on the
 * stack), and bad values print Linux's lines (kernel/params.c: parse_args,
 * param_set_copystring) and refuse the module with Linux's errno.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { ModuleError } from '../../emulator/kernel/modules/modules';
import { hashPointer, ptrKey } from '../../emulator/kernel/printk';
import { repoPath } from '../util/paths';
import { KBUILD_ARCHES, builtModule, kbuild, unavailable } from './kbuild';

function boot(arch: string): { m: Machine; log: string[]; stamps: bigint[] } {
  const m = new Machine(loadElf(repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`)), { cpus: 1 });
  const log: string[] = [];
  const stamps: bigint[] = [];
  m.onPrintk(r => { log.push(r.text); stamps.push(r.timeNs); });
  return { m, log, stamps };
}

function runUntil(m: Machine, cond: () => boolean, what: string, log: readonly string[]): void {
  for (let i = 0; i < 400 && !cond(); i++) {
    const r = m.runSlice(10_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.ok(cond(), `never happened: ${what}\n${log.slice(-20).join('\n')}`);
}

const hex16 = (v: bigint): string => v.toString(16).padStart(16, '0');

for (const arch of KBUILD_ARCHES) describe(`module parameters of a module built with examples/include/Makefile (${arch})`, () => {
  let built: { out: string } | { missing: string } | undefined;
  const ko = (t: { skip(msg: string): void }): string | undefined => {
    built ??= kbuild(repoPath('test', 'modules', 'kbuild'), arch);
    if ('missing' in built) { unavailable(t, built.missing); return undefined; }
    return builtModule(built.out, 'modparams');
  };

  test('every kind of parameter is set from name=value; printk formats as Linux (stack arguments, %p hashed, %pS, KERN_CONT)', t => {
    const path = ko(t);
    if (!path) return;
    const { m, log, stamps } = boot(arch);
    const mod = m.modules.load(new Uint8Array(readFileSync(path)), path,
      ['count=0x10', 'big=18446744073709551615', 'small=-5', 'verbose', 'quiet', 'who=alice', 'name=bob', 'mask=0xff', 'level=0377', 'nope=1']);
    assert.equal(mod.name, 'modparams', 'named by its .modinfo, as Kbuild names it');
    runUntil(m, () => mod.state === 'live', 'init', log);
    assert.ok(log.includes("modparams: unknown parameter 'nope' ignored"), log.join('\n'));
    assert.ok(log.includes('modparams: count=16 big=18446744073709551615 small=-5 verbose=1 loud=0 who=alice name=bob mask=0xff level=255'), log.join('\n'));
    const fn = mod.symbols.find(s => s.name === 'modparams_target');
    assert.ok(fn);
    const line = `modparams: ${hex16(hashPointer(fn.value, ptrKey(0n)))}|${hex16(fn.value)}|modparams_target+0x0/0x${fn.size.toString(16)} [modparams]|`
      + 'modparams_target [modparams]|19    |-00042|ok';
    assert.ok(log.includes(line), `expected ${line}\n${log.join('\n')}`);
    assert.ok(log.includes('no newline continued'), log.join('\n'));
    // ktime_get(): the CPU's clock, which stamps the printk record a few instructions later
    const k = log.findIndex(l => l.startsWith('modparams: ktime_get='));
    assert.ok(k >= 0, log.join('\n'));
    const ns = BigInt(log[k].slice('modparams: ktime_get='.length));
    assert.ok(ns > 0n && stamps[k] >= ns && stamps[k] - ns < 1_000_000n, `ktime_get ${ns}, record stamped ${stamps[k]}`);
    assert.ok(log.includes('modparams: current: comm=insmod mm=0000000000000000 active_mm=0000000000000000 kthread=1 pid>0=1'), log.join('\n'));
  });

  test("bad values: Linux's lines and errno, nothing loaded", t => {
    const path = ko(t);
    if (!path) return;
    const bytes = new Uint8Array(readFileSync(path));
    const refused = (params: string[], message: RegExp, lines: string[]): void => {
      const { m, log } = boot(arch);
      assert.throws(() => m.modules.load(bytes, path, params), (e: unknown) => e instanceof ModuleError && e.logged && message.test(e.message));
      assert.equal(m.modules.get('modparams'), undefined);
      for (const l of lines) assert.ok(log.includes(l), `expected ${l}\n${log.join('\n')}`);
    };
    refused(['count=12abc'], / \(Invalid argument, err -22\)$/, ["modparams: `12abc' invalid for parameter `count'"]);
    refused(['who'], /err -22/, ["modparams: `' invalid for parameter `who'"]);
    refused(['small=40000'], / \(Numerical result out of range, err -34\)$/, ["modparams: `40000' invalid for parameter `small'"]);
    refused(['level=-1'], /err -22/, ["modparams: `-1' invalid for parameter `level'"]);
    refused(['verbose=maybe'], /err -22/, ["modparams: `maybe' invalid for parameter `verbose'"]);
    refused(['name=eightchr'], / \(No space left on device, err -28\)$/,
      ["name: string doesn't fit in 7 chars.", "modparams: `eightchr' too large for parameter `name'"]);
    // the first failure ends parse_args: the parameters before it were set, the ones after are not looked at
    refused(['count=2', 'mask=zz', 'nope=1'], /err -22/, ["modparams: `zz' invalid for parameter `mask'"]);
  });
});
