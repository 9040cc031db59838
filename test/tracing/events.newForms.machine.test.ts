/**
 * Linux 6.1's newer kprobe_events forms end to end on the bundled x86_64
 * sample kernel (examples/kernel), through a .kprobe file: the self-test's
 * sys_open("/nonexistent", O_RDONLY, 0) (main.c kprobes_selftest, fs.c)
 * passes a kernel string, so
 *   - string reads it, ustring and +u0() fault (a user read of a kernel
 *     address, as copy_from_user_nofault's access_ok refuses it);
 *   - u8[4] prints its first four bytes, b4@4/8 the high half of '/';
 *   - symstr of the return address names the caller;
 *   - SYM%return is a return probe, listed back as r:.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { kprobeEvents } from '../../emulator/tracing/events';
import { addFile, probeRig, runAll } from '../probes/helpers';

const FILE = 'p:um sys_open k=+0(%di):string u=+0(%di):ustring ku=+u0(%di):u8 a=+0(%di):u8[4] b=+0(%di):b4@4/8 ra=$stack0:symstr';
// a separate run: its kretprobe would put the trampoline where um reads the return address
const RET_FILE = 'p:ur sys_open%return rv=$retval:s64';

test('ustring and +u0() fault on a kernel string; arrays, bitfields, symstr and %return on the sample kernel', () => {
  const run = (file: string, kind: string) => {
    const { machine, mgr } = probeRig();
    const r = addFile(mgr, file);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.probes.map(p => [p.kind, p.target, p.verified]), [[kind, 'sys_open', true]]);
    const out = runAll(machine);
    assert.equal(out.exit.reason, 'poweroff');
    return { machine, out };
  };
  const entry = run(FILE, 'kprobe');
  const ret = run(RET_FILE, 'kretprobe');
  const first = (ev: string) => [...entry.out.records, ...ret.out.records].find(x => x.text.includes(` ${ev}: `) && x.text.startsWith('            init-1 '))?.text ?? '';
  const bytes = [...'/non'].map(c => c.charCodeAt(0)).join(',');
  assert.match(first('um'), new RegExp(`um: \\(sys_open\\+0x0/0x[0-9a-f]+\\) k="/nonexistent" u=\\(fault\\) ku=\\(fault\\) a=\\{${bytes}\\} b=${'/'.charCodeAt(0) >> 4} ra="kprobes_selftest\\+0x[0-9a-f]+/0x[0-9a-f]+"$`));
  assert.match(first('ur'), /ur: \(kprobes_selftest\+0x[0-9a-f]+\/0x[0-9a-f]+ <- sys_open\) rv=-2$/);
  assert.equal(kprobeEvents(ret.machine.kernel), 'r:kprobes/ur sys_open rv=$retval:s64\n');
});
