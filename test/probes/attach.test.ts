/**
 * The probe manager is composed above the machine (probes/attach.ts): one
 * per machine, made at the first probesOf / attachProbes and attached to
 * the machine, where the kernel's tracefs defines kprobe_events probes
 * through it; a machine nothing attached a manager to refuses event
 * definitions as a kernel without kprobe events would (-ENODEV, error_log).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Machine } from '../../emulator/machine';
import { attachProbes, probesOf } from '../../emulator/probes/attach';
import { openPseudo } from '../../emulator/kernel/fs/pseudo';
import { sampleImage } from './helpers';

const O_RDONLY = 0, O_WRONLY = 1, O_TRUNC = 0o1000;

function file(m: Machine, path: string, flags: number) {
  const r = m.kernel.fs.lookup(path, m.kernel.fs.root);
  assert.ok(r.ok && r.inode.pseudo, path);
  const dev = openPseudo(r.inode.pseudo, flags);
  assert.ok(typeof dev !== 'number', path);
  return dev;
}

const define = (m: Machine, text: string): number => file(m, '/sys/kernel/tracing/kprobe_events', O_WRONLY | O_TRUNC).write(new TextEncoder().encode(text));

function read(m: Machine, path: string): string {
  const r = file(m, path, O_RDONLY).read(1 << 16);
  assert.ok(typeof r !== 'number', path);
  return new TextDecoder().decode(r);
}

describe('probes/attach: the probe manager composed over a machine', () => {
  test('probesOf makes one manager per machine, attached to it; attachProbes gives the same one', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    assert.equal(m.attachedProbes, null);
    const mgr = probesOf(m);
    assert.equal(m.attachedProbes, mgr);
    assert.equal(probesOf(m), mgr);
    assert.equal(attachProbes(m), mgr);
    assert.equal(mgr.engine, m.kprobes);
    const other = new Machine(sampleImage(), { cpus: 1 });
    assert.notEqual(probesOf(other), mgr);
  });

  test('the machine\'s probe options reach the manager (the handler step budget of a compiled probe file)', () => {
    const m = new Machine(sampleImage(), { cpus: 1, probes: { stepBudget: 7 } });
    assert.equal(probesOf(m).checkOptions().stepBudget, 7);
  });

  test('kprobe_events written by the guest side defines a probe in the attached manager; without one it is -ENODEV with an error_log line', () => {
    const bare = new Machine(sampleImage(), { cpus: 1 });
    assert.equal(define(bare, 'p:myprobe do_fork\n'), -19);
    assert.match(read(bare, '/sys/kernel/tracing/error_log'), /kprobes are not available on this machine/);
    assert.equal(bare.attachedProbes, null, 'writing kprobe_events attaches nothing');

    const m = new Machine(sampleImage(), { cpus: 1 });
    const mgr = attachProbes(m);
    assert.ok(mgr);
    assert.equal(define(m, 'p:myprobe do_fork\n'), 18);
    assert.deepEqual(mgr.list().map(p => [p.event, p.target, p.verified]), [['kprobes/myprobe', 'do_fork', true]]);
  });

  test('debugfs kprobes/list and enabled read the engine, attached manager or not', () => {
    const m = new Machine(sampleImage(), { cpus: 1 });
    assert.equal(read(m, '/sys/kernel/debug/kprobes/enabled'), '1\n');
    assert.equal(read(m, '/sys/kernel/debug/kprobes/list'), '');
    assert.equal(m.kprobes.registerKprobe({ symbol_name: 'do_fork', pre_handler: () => 0 }), 0);
    assert.match(read(m, '/sys/kernel/debug/kprobes/list'), /do_fork\+0x0/);
    assert.equal(m.attachedProbes, null);
  });
});
