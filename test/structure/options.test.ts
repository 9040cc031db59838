/**
 * Machine options and the subsystems the Machine owns: the ranges stated
 * once in emulator/machineOptions.ts agree with package.json's launch
 * schema; the Machine validates with them; it starts its kprobes engine at
 * boot (which registers its sysctl in the kernel's table) and owns one
 * probe manager on top of it.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { repoPath } from '../util/paths';
import { MACHINE_LIMITS, machineOption, machineOptionError } from '../../emulator/machineOptions';
import { Machine } from '../../emulator/machine';
import { SysctlTable } from '../../emulator/kernel/sysctl';
import { sampleImage } from '../kprobes/harness';
import { probesOf } from '../../emulator/probes/attach';

describe('machine options', () => {
  test('package.json\'s launch schema states the same cpus range and default', () => {
    const pkg = JSON.parse(readFileSync(repoPath('package.json'), 'utf8'));
    const props = pkg.contributes.debuggers[0].configurationAttributes.launch.properties;
    assert.equal(props.cpus.minimum, MACHINE_LIMITS.cpus.min);
    assert.equal(props.cpus.maximum, MACHINE_LIMITS.cpus.max);
    assert.equal(props.cpus.default, MACHINE_LIMITS.cpus.default);
    assert.equal(props.maxInstructions.default, MACHINE_LIMITS.maxInstructions.default);
  });

  test('one wording for a bad value, defaults for absent ones', () => {
    assert.equal(machineOptionError('cpus', 65), '"cpus" must be an integer from 1 to 64, got 65');
    assert.equal(machineOptionError('cpus', 1.5), '"cpus" must be an integer from 1 to 64, got 1.5');
    assert.equal(machineOptionError('cpus', '2'), '"cpus" must be an integer from 1 to 64, got "2"');
    assert.equal(machineOptionError('maxInstructions', -1), '"maxInstructions" must be a non-negative integer, got -1');
    assert.equal(machineOptionError('cpus', 64), undefined);
    assert.equal(machineOption('cpus', undefined), 2);
    assert.throws(() => machineOption('quantum', 0), RangeError);
  });
});

describe('the Machine owns its subsystems', () => {
  test('one kprobes engine started at boot, one probe manager on it, the sysctl in the kernel\'s table', () => {
    const m = new Machine(sampleImage(), { cpus: 1, kprobes: { optimization: false } });
    assert.ok(m.hasKprobes);
    assert.equal(m.kprobes, m.kprobes);
    assert.equal(probesOf(m).engine, m.kprobes);
    assert.equal(probesOf(m), probesOf(m));
    assert.equal(m.kernel.sysctl.read('debug.kprobes_optimization'), '0\n', 'the launch option is the sysctl\'s value at boot');
    assert.deepEqual(m.writeSysctl('debug.kprobes_optimization', '1'), { errno: 0 });
    assert.equal(m.kprobes.optimization, true);
  });

  test('kprobes: false boots without an engine; asking for it is a clear error', () => {
    const m = new Machine(sampleImage(), { cpus: 1, kprobes: false });
    assert.equal(m.hasKprobes, false);
    assert.throws(() => m.kprobes, /no kprobes engine on this machine/);
    assert.deepEqual(m.kernel.sysctl.names(), []);
    assert.match(m.writeSysctl('debug.kprobes_optimization', '0').reason ?? '', /unknown sysctl 'debug.kprobes_optimization' \(known: none\)/);
  });
});

describe('sysctl table', () => {
  test('entries by dotted name or /proc/sys path; -EINVAL with the reason for unknown names and bad values', () => {
    const t = new SysctlTable();
    let v = 0;
    t.register({
      name: 'kernel.answer', procPath: '/proc/sys/kernel/answer', values: 'N',
      read: () => `${v}\n`,
      parse: text => /^\d+$/.test(text.trim()) ? { ok: true, apply: () => { v = Number(text.trim()); } } : { ok: false, reason: `expected a number, got '${text}'` },
    });
    assert.deepEqual(t.write('kernel.answer', '42'), { errno: 0 });
    assert.equal(t.read('/proc/sys/kernel/answer'), '42\n');
    assert.deepEqual(t.write('kernel.answer', 'x'), { errno: -22, reason: 'kernel.answer: expected a number, got \'x\'' });
    assert.deepEqual(t.write('kernel.nope', '1'), { errno: -22, reason: 'unknown sysctl \'kernel.nope\' (known: kernel.answer)' });
    assert.equal(v, 42, 'a rejected write changes nothing');
    assert.throws(() => t.register({ ...t.entry('kernel.answer')! }), /already registered/);
  });
});
