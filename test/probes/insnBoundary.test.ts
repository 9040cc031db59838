/**
 * A kprobe address that splits an x86 instruction (a breakpoint there would
 * corrupt it). The default keeps Linux 2.6's behaviour (registered, no check
 * on CISC) and warns, naming the instruction and its range; insnBoundary:
 * 'reject' behaves like today's kernels (-EILSEQ). Boundaries are decoded
 * from the function's start on the image's bytes.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { splitInstruction } from '../../emulator/arch/insnBoundary';
import { loadElf } from '../../emulator/elf/elfFile';
import { addFile, probeRig, runAll, SAMPLE_IMAGE, sampleImage, sym } from './helpers';

const MOV = 'do_fork+0x3 is inside "mov rbp, rsp" (do_fork+0x1..+0x4)';

describe('a probe offset inside an x86 instruction (a breakpoint there would split it)', () => {
  test('splitInstruction names the instruction and its range; instruction boundaries are not reported', () => {
    const { machine } = probeRig();
    const split = splitInstruction(sampleImage(), machine.arch, sym('do_fork') + 3n);
    assert.ok(split);
    assert.equal(split.message, MOV);
    assert.equal(split.start, sym('do_fork') + 1n);
    assert.equal(split.length, 3);
    for (const off of [0n, 1n, 4n]) assert.equal(splitInstruction(sampleImage(), machine.arch, sym('do_fork') + off), undefined, `+${off}`);
  });

  test('default: registered as on 2.6, with a warning on the breakpoint (the debugger) and in the log (source emulator)', () => {
    const { machine, mgr } = probeRig();
    const e = mgr.addBreakpoint({ target: 'do_fork+0x3' });
    assert.equal(e.verified, true);
    assert.match(e.message ?? '', new RegExp(`^warning: ${MOV.replace(/[().+]/g, c => `\\${c}`)}: registered as on Linux 2\\.6`));
    const w = machine.printkRecords.filter(r => r.text.includes('warning:'));
    assert.deepEqual(w.map(r => [r.source, r.text.slice(0, r.text.indexOf(': registered'))]), [['emulator', `breakpoint ${e.id} do_fork+0x3: warning: ${MOV}`]]);
  });

  test('a probe-file probe: the warning names the file position; boundaries are decoded from the image, not from live memory', () => {
    const { machine, mgr } = probeRig();
    // a probe at +0x1 first: live memory now has an int3 there, the image does not
    const r = addFile(mgr, 'kprobe do_fork+0x1 { pre { return 0; } }\nkprobe do_fork+0x3 { pre { return 0; } }\n', 'split.kprobe');
    assert.deepEqual(r.errors, []);
    const w = machine.printkRecords.filter(x => x.text.includes('warning:')).map(x => x.text.slice(0, x.text.indexOf(': registered')));
    assert.deepEqual(w, [`split.kprobe:2:1: kprobe do_fork+0x3: warning: ${MOV}`]);
    assert.equal(r.probes[0].message, undefined);
  });

  test('the walk over instruction starts asks the arch for lengths alone: the same answers as decoding each instruction', () => {
    const { machine } = probeRig();
    const arch = machine.arch;
    assert.ok(arch.insnLength, 'x86_64 says an instruction\'s length alone');
    const image = sampleImage();
    const text = image.segments.find(s => s.type === 1 && (s.flags & 1) !== 0);
    assert.ok(text);
    // every byte offset of every function: insnLength is decodeBytes' length (null where nothing decodes)
    let checked = 0;
    for (const f of image.symbols.functions()) {
      if (f.size === 0n || f.value < text.vaddr || f.value + f.size > text.vaddr + text.filesz) continue;
      for (let a = f.value; a < f.value + f.size; a++) {
        const off = Number(a - text.vaddr);
        const bytes = text.data.subarray(off, off + 16);
        assert.equal(arch.insnLength(bytes, a), arch.decodeBytes(bytes, a)?.length ?? null, `0x${a.toString(16)}`);
        checked++;
      }
    }
    assert.ok(checked > 1000, `${checked} addresses`);
    // splitInstruction with an arch that only decodes whole instructions answers the same at every offset
    // (on an image of its own: the instruction starts found are kept per image)
    const decodeOnly = { decodeBytes: arch.decodeBytes.bind(arch) };
    const other = loadElf(SAMPLE_IMAGE);
    let splits = 0;
    for (const name of ['do_fork', 'do_sys_open', 'do_exit']) {
      const f = image.symbols.lookup(name);
      assert.ok(f);
      for (let off = f.size - 1n; off >= 0n; off--) {
        const want = splitInstruction(other, decodeOnly, f.value + off);
        assert.deepEqual(splitInstruction(image, arch, f.value + off), want, `${name}+${off}`);
        if (want) splits++;
      }
    }
    assert.ok(splits > 20, `${splits} split offsets`);
  });

  test("insnBoundary: 'reject' is -EILSEQ naming the instruction; nothing is written, the kernel runs normally", () => {
    const { machine, mgr } = probeRig({ insnBoundary: 'reject' });
    const e = mgr.addBreakpoint({ target: 'do_fork+0x3' });
    assert.equal(e.verified, false);
    assert.equal(e.message, `register_kprobe failed: -EILSEQ (${MOV})`);
    const r = addFile(mgr, 'kprobe do_fork+0x3 { pre { return 0; } }\nkprobe do_fork+0x4 { pre { printk("hit\\n"); return 0; } }\n', 'split.kprobe');
    assert.deepEqual(r.errors, [`split.kprobe:1:1: kprobe do_fork+0x3: register_kprobe failed: -EILSEQ (${MOV})`]);
    const out = runAll(machine);
    assert.equal(out.exit.reason, 'poweroff');
    assert.equal(out.exit.code, 0);
    assert.equal(machine.kernel.oopsCount, 0);
    assert.ok(out.lines.filter(l => l === 'hit').length > 0, 'the probe on the boundary registers and runs');
  });
});
