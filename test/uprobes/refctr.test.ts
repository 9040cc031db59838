/**
 * Uprobe reference counters (uprobe_register_refctr; Linux
 * kernel/events/uprobes.c update_ref_ctr): test/uprobes/refctr/refctr.c reads its
 * own SDT semaphore, a short in its data segment, prints it and calls the
 * probed functions only while it is set. The machine runs in slices; the
 * probes change between two of the program's reads.
 *
 * Linux's rules checked: the counter is incremented in every process that
 * gets the breakpoint (register, and a later exec / fork of the file) and
 * decremented when the breakpoint is taken out; two uprobes (two offsets)
 * on one counter make it 2; a second consumer of the same (inode, offset)
 * writes no second breakpoint, so the counter stays 1; another
 * ref_ctr_offset on an (inode, offset) that has one is -EINVAL ("ref_ctr_offset
 * mismatch"); a ref_ctr_offset that is not 2-byte aligned is -EINVAL.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage } from '../../emulator/elf/types';
import { Machine } from '../../emulator/machine';
import type { Inode } from '../../emulator/kernel/fs/vfs';
import type { UserProcess } from '../../emulator/kernel/user/process';
import { Errno } from '../../emulator/kernel/abi';
import type { UprobeConsumer } from '../../emulator/uprobes';
import { repoPath } from '../util/paths';
import { ARCHES } from './prog';

export const REFCTR_BIN = (arch: string): string => repoPath('test', 'uprobes', 'refctr', `refctr-${arch}.elf`);

/** the file offset of a symbol (its PT_LOAD segment's) */
export function fileOffset(img: ElfImage, name: string): bigint {
  const s = img.symbols.lookup(name);
  assert.ok(s, name);
  const seg = img.segments.find(g => g.type === 1 && s.value >= g.vaddr && s.value < g.vaddr + g.memsz);
  assert.ok(seg, `${name} in a segment`);
  return s.value - seg.vaddr + seg.offset;
}

class RefProg {
  readonly m: Machine;
  readonly img: ElfImage;
  out = '';
  constructor(readonly arch: string, args: string[] = []) {
    this.img = loadElf(REFCTR_BIN(arch));
    const io = { stdout: (b: Uint8Array) => { this.out += Buffer.from(b).toString(); }, stderr: (b: Uint8Array) => { this.out += Buffer.from(b).toString(); } };
    this.m = Machine.forUserProgram(this.img, [REFCTR_BIN(arch), ...args], io, { cpus: 1 });
  }
  get init(): UserProcess { return this.m.kernel.processes.get(1)!; }
  get inode(): Inode { return this.init.exe!; }
  off(name: string): bigint { return fileOffset(this.img, name); }
  /** the semaphore as the process holds it */
  sem(proc: UserProcess = this.init): number {
    const b = proc.mm.readBytes(Number(this.img.symbols.lookup('probe_sem')!.value), 2);
    return b[0] | (b[1] << 8);
  }
  /** the values the program printed so far */
  sems(): number[] { return [...this.out.matchAll(/^sem (\d+)$/gm)].map(m => Number(m[1])); }
  /** run until the program has printed n semaphore values */
  runUntilPrinted(n: number): void {
    for (let i = 0; i < 10_000 && this.sems().length < n; i++) {
      const r = this.m.runSlice(500);
      if (r.kind === 'exited') break;
    }
    assert.equal(this.sems().length, n, this.out);
  }
  register(name: string, uc: UprobeConsumer, ref = this.off('probe_sem')): number {
    return this.m.uprobes.register(this.inode, this.off(name), uc, ref).errno;
  }
}

const counting = (n: { hits: number }): UprobeConsumer => ({ handler: () => { n.hits++; return 0; } });

for (const arch of ARCHES) {
  describe(`uprobe reference counters (${arch})`, () => {
    test('the program reads 0 before, 1 while a uprobe with its counter is registered, 2 with a second one, 0 after', () => {
      const p = new RefProg(arch);
      const a = { hits: 0 }, b = { hits: 0 };
      const ua = counting(a), ub = counting(b);
      p.runUntilPrinted(1);
      assert.equal(p.sem(), 0);
      assert.equal(p.register('probed', ua), 0);
      assert.equal(p.sem(), 1, 'incremented in the running process at registration');
      p.runUntilPrinted(2);
      assert.equal(p.register('probed2', ub), 0);
      assert.equal(p.sem(), 2, 'a second uprobe on the same counter');
      p.runUntilPrinted(3);
      assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('probed'), ua), 0);
      assert.equal(p.sem(), 1);
      p.runUntilPrinted(4);
      assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('probed2'), ub), 0);
      assert.equal(p.sem(), 0, 'decremented when the breakpoint goes');
      const e = p.m.run();
      assert.equal(e.code, 0);
      assert.deepEqual(p.sems(), [0, 1, 2, 1, 0, 0]);
      // the program called the probed functions while its counter said so: probed in iterations 1-2, probed2 in 2-3
      assert.deepEqual([a.hits, b.hits], [2, 2]);
      assert.match(p.out, /^hits 303$/m);
      assert.match(p.out, /^exec sem 0$/m);
    });

    test('a second consumer on the same (inode, offset) writes no second breakpoint: the counter stays 1', () => {
      const p = new RefProg(arch);
      const a = { hits: 0 }, b = { hits: 0 };
      const ua = counting(a), ub = counting(b);
      p.runUntilPrinted(1);
      assert.equal(p.register('probed', ua), 0);
      assert.equal(p.register('probed', ub), 0);
      assert.equal(p.sem(), 1);
      assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('probed'), ua), 0);
      assert.equal(p.sem(), 1, 'the breakpoint stays for the other consumer');
      assert.equal(p.m.uprobes.uprobeUnregister(p.inode, p.off('probed'), ub), 0);
      assert.equal(p.sem(), 0);
    });

    test('another ref_ctr_offset on a probed (inode, offset) is -EINVAL with Linux\'s warning; a misaligned one too', () => {
      const p = new RefProg(arch);
      p.runUntilPrinted(1);
      const ref = p.off('probe_sem');
      assert.equal(p.register('probed', counting({ hits: 0 })), 0);
      const r = p.m.uprobes.register(p.inode, p.off('probed'), counting({ hits: 0 }), ref + 2n);
      assert.equal(r.errno, -Errno.EINVAL);
      assert.match(r.reason ?? '', /ref_ctr_offset mismatch\. inode: 0x[0-9a-f]+ offset: 0x[0-9a-f]+ ref_ctr_offset\(old\): 0x[0-9a-f]+ ref_ctr_offset\(new\): 0x[0-9a-f]+/);
      assert.ok(p.m.printkRecords.some(x => /ref_ctr_offset mismatch/.test(x.text)));
      assert.equal(p.sem(), 1, 'the refused registration changed nothing');
      assert.equal(p.m.uprobes.register(p.inode, p.off('probed2'), counting({ hits: 0 }), ref + 1n).errno, -Errno.EINVAL);
      assert.equal(p.m.uprobes.get(p.inode, p.off('probed2')), undefined);
    });

    test('an image mapped later (the program execs itself) gets the breakpoint and its counter incremented', () => {
      const p = new RefProg(arch);
      const a = { hits: 0 };
      // registered before the first instruction: the counter is set when the program first reads it
      assert.equal(p.register('probed', counting(a)), 0);
      assert.equal(p.sem(), 1);
      const e = p.m.run();
      assert.equal(e.code, 0);
      assert.deepEqual(p.sems(), [1, 1, 1, 1, 1, 1]);
      // probed(0..5) in the first image, probed(1) in the exec'd one, which read its fresh counter as 1
      assert.match(p.out, /^hits 1515$/m);
      assert.match(p.out, /^exec sem 1$/m);
      assert.equal(a.hits, 7);
      assert.equal(p.m.uprobes.get(p.inode, p.off('probed'))!.insertions.size, 0, 'the process ended: its breakpoint with it');
    });
  });
}

for (const arch of ARCHES) {
  test(`${arch}: a counter no writable mapping holds yet waits; the private writable mmap of the file that comes later gets the increment`, () => {
    const p = new RefProg(arch, ['map']);
    const E_MACHINE = 18n;
    const machine = p.img.machine;
    assert.equal(p.register('probed', counting({ hits: 0 }), E_MACHINE), 0);
    // the breakpoint is in, the counter nowhere writable: the increment waits (delayed_uprobe_add)
    assert.equal(p.m.uprobes.refCtrs.pending(p.init.mm), 1);
    const e = p.m.run();
    assert.equal(e.code, 0);
    assert.match(p.out, new RegExp(`^mapped e_machine ${machine + 1}$`, 'm'), 'delayed_ref_ctr_inc at the mmap');
    assert.equal(new Uint8Array(p.inode.data())[18] | (new Uint8Array(p.inode.data())[19] << 8), machine, 'the file keeps its bytes');
  });
}

describe('uprobe_events PATH:OFFSET(REF_CTR_OFFSET) from the CLI', () => {
  for (const arch of ARCHES) {
    test(`${arch}: the event's uprobe counts in the program's semaphore; uprobe_events shows the counter's offset`, () => {
      const root = mkdtempSync(join(tmpdir(), 'g4-refctr-'));
      try {
        copyFileSync(REFCTR_BIN(arch), join(root, 'prog'));
        chmodSync(join(root, 'prog'), 0o755);
        const img = loadElf(REFCTR_BIN(arch));
        const probe = fileOffset(img, 'probed'), ref = fileOffset(img, 'probe_sem');
        const r = spawnSync(process.execPath, [repoPath('dist', 'cli.js'), 'exec', '--rootfs', root, '--list',
          '--event', `p:uprobes/sdt /prog:0x${probe.toString(16)}(0x${ref.toString(16)})`, '/prog'], { encoding: 'utf8' });
        assert.equal(r.status, 0, r.stderr);
        const sems = [...r.stdout.matchAll(/^sem (\d+)$/gm)].map(m => m[1]);
        assert.deepEqual(sems, ['1', '1', '1', '1', '1', '1'], r.stdout);
        assert.match(r.stdout, /^exec sem 1$/m);
        assert.match(r.stdout, new RegExp(`^p:uprobes/sdt /prog:0x${probe.toString(16).padStart(16, '0')}\\(0x${ref.toString(16)}\\)$`, 'm'));
        assert.equal([...r.stderr.matchAll(/ sdt: \(0x[0-9a-f]+\)/g)].length, 7, 'probed(0..5), then probed(1) after the exec');
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    });
  }

  test('a second event on the same file offset with another reference counter is refused (trace_uprobe: Reference counter offset mismatch.); the first stays', () => {
    const arch = 'x86_64';
    const root = mkdtempSync(join(tmpdir(), 'g4-refctr-'));
    try {
      copyFileSync(REFCTR_BIN(arch), join(root, 'prog'));
      chmodSync(join(root, 'prog'), 0o755);
      const img = loadElf(REFCTR_BIN(arch));
      const probe = fileOffset(img, 'probed').toString(16), ref = fileOffset(img, 'probe_sem');
      const r = spawnSync(process.execPath, [repoPath('dist', 'cli.js'), 'exec', '--rootfs', root, '--list',
        '--event', `p:uprobes/a /prog:0x${probe}(0x${ref.toString(16)})`,
        '--event', `p:uprobes/b /prog:0x${probe}(0x${(ref + 2n).toString(16)})`,
        '--event', `p:uprobes/c /prog:0x${probe}(0x${ref.toString(16)})`, '/prog'], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.match(r.stderr, /--event:2:1: uprobe \/prog:0x[0-9a-f]+: Reference counter offset mismatch/);
      assert.match(r.stdout + r.stderr, /^trace_uprobe: Reference counter offset mismatch\.$/m);
      const listed = [...r.stdout.matchAll(/^p:uprobes\/(\w+) /gm)].map(m => m[1]);
      assert.deepEqual(listed, ['a', 'c'], 'the same counter is fine');
      assert.deepEqual([...r.stdout.matchAll(/^sem (\d+)$/gm)].map(m => m[1]), ['1', '1', '1', '1', '1', '1'], 'one uprobe, one breakpoint: 1');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
