/**
 * Differential uprobes test: every test/uprobes/bin/*.elf runs without
 * probes, with a uprobe + uretprobe consumer on every function symbol, and
 * with a uprobe on every instruction of every function; stdout and the exit
 * code must be byte-identical to each other and to qemu's golden (the
 * x86_64 one of the same -O level: qemu cannot exec a foreign binary here).
 * Entry and return hits must pair up for the functions that always return.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { loadElf } from '../../emulator/elf/elfFile';
import type { ElfImage, ElfSymbol } from '../../emulator/elf/types';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';

const BIN_DIR = repoPath('test', 'uprobes', 'bin');
const ELFS = readdirSync(BIN_DIR).filter(f => f.endsWith('.elf')).sort();
const C_FUNCTIONS = ['leaf', 'fact', 'tail', 'bump', 'escape', 'work', 'cstart'];
/**
 * Functions whose returns do not pair with their entries: cstart and
 * child_part end in exit_group, escape leaves by longjmp; sys6 (-O0: the
 * system call stub) never returns from 3 exit_groups and 1 successful
 * execve, and returns twice from each of the 2 clones (the child inherits
 * the pending return instance, as Linux's uprobe_copy_process copies them).
 * Returns = entries + this.
 */
const UNPAIRED: Readonly<Record<string, (entries: number) => number>> = {
  cstart: () => 0, child_part: () => 0, escape: () => 0, sys6: n => n - 4 + 2,
};

interface Outcome { out: string; code: number; reason: string }

function machine(path: string): { m: Machine; img: ElfImage; get: () => Outcome } {
  const img = loadElf(path);
  let out = '';
  const m = Machine.forUserProgram(img, [path], {
    stdout: b => { out += Buffer.from(b).toString(); }, stderr: b => { out += `ERR:${Buffer.from(b).toString()}`; },
  }, { cpus: 2 });
  return { m, img, get: () => { const e = m.run(); return { out, code: e.code, reason: e.reason }; } };
}

const execSeg = (img: ElfImage) => img.segments.find(s => s.type === 1 && (s.flags & 1))!;
/** function symbols with a size inside the executable segment */
function functions(img: ElfImage): ElfSymbol[] {
  const seg = execSeg(img);
  return img.symbols.functions().filter(s => s.type === 'func' && s.size > 0n && s.value >= seg.vaddr && s.value + s.size <= seg.vaddr + seg.filesz);
}

for (const f of ELFS) {
  const path = `${BIN_DIR}/${f}`;
  const opt = /-(O\d)\.elf$/.exec(f)![1];
  const golden: Outcome = {
    out: readFileSync(repoPath('test', 'uprobes', 'golden', `uprobed-x86_64-gcc-${opt}.out`), 'utf8'),
    code: Number(readFileSync(repoPath('test', 'uprobes', 'golden', `uprobed-x86_64-gcc-${opt}.code`), 'utf8').trim()),
    reason: 'poweroff',
  };

  describe(`uprobes differential: ${f}`, () => {
    const plain = machine(path).get();

    test('without probes: the golden output and exit code', () => {
      assert.deepEqual(plain, golden);
    });

    test('a uprobe + uretprobe consumer on every function: the same output; entries and returns pair up', () => {
      const { m, img, get } = machine(path);
      const inode = m.kernel.processes.get(1)!.exe!;
      const seg = execSeg(img);
      const entries = new Map<string, number>(), rets = new Map<string, number>();
      const registered: string[] = [], refused: string[] = [];
      let badFunc = 0;
      for (const s of functions(img)) {
        const r = m.uprobes.register(inode, s.value - seg.vaddr + seg.offset, {
          handler: () => { entries.set(s.name, (entries.get(s.name) ?? 0) + 1); return 0; },
          ret_handler: (_uc, func) => { if (func !== s.value) badFunc++; rets.set(s.name, (rets.get(s.name) ?? 0) + 1); return 0; },
        });
        (r.errno === 0 ? registered : refused).push(`${s.name}${r.reason ? `: ${r.reason}` : ''}`);
      }
      for (const name of C_FUNCTIONS) assert.ok(registered.includes(name), `${name} registered (refused: ${refused.join('; ')})`);
      const got = get();
      assert.deepEqual(got, plain);
      assert.deepEqual(got, golden);
      assert.equal(badFunc, 0, 'ret_handler func = the entry address');
      for (const name of C_FUNCTIONS) assert.ok((entries.get(name) ?? 0) > 0, `${name} hit`);
      for (const [name, n] of entries) {
        assert.equal(rets.get(name) ?? 0, UNPAIRED[name]?.(n) ?? n, `${name}: returns for ${n} entries`);
      }
      assert.equal(entries.get('escape'), 4);
      assert.equal(rets.get('escape') ?? 0, 0, 'escape only ever leaves by longjmp');
      assert.equal(rets.get('cstart') ?? 0, 0);
      const total = [...entries.values()].reduce((a, b) => a + b, 0);
      assert.equal(m.uprobes.stats.hits, total);
      assert.equal(m.uprobes.stats.retHits, [...rets.values()].reduce((a, b) => a + b, 0));
      for (const u of m.uprobes.list()) assert.equal(u.nmissed, 0);
      assert.deepEqual(m.printkRecords.map(r => r.text).filter(t => /uprobe/.test(t)), []);
    });

    test('a uprobe on every instruction of every function (and uretprobes on their entries): the same output; every probe stepped or simulated', () => {
      const { m, img, get } = machine(path);
      const inode = m.kernel.processes.get(1)!.exe!;
      const seg = execSeg(img);
      let hits = 0, probes = 0;
      const refused = new Set<string>();
      const uc = { handler: () => { hits++; return 0; } };
      const entries = new Map<string, number>(), rets = new Map<string, number>();
      for (const s of functions(img)) {
        // the returns go through probed return instructions (stepped out of line into the trampoline)
        assert.equal(m.uprobes.uprobeRegister(inode, s.value - seg.vaddr + seg.offset, {
          handler: () => { entries.set(s.name, (entries.get(s.name) ?? 0) + 1); return 0; },
          ret_handler: () => { rets.set(s.name, (rets.get(s.name) ?? 0) + 1); return 0; },
        }), 0);
        for (let at = s.value; at < s.value + s.size;) {
          const o = Number(at - seg.vaddr);
          const d = m.kernel.arch.decodeBytes(seg.data.subarray(o, o + 16), at);
          assert.ok(d, `${s.name}+0x${(at - s.value).toString(16)} decodes`);
          const r = m.uprobes.register(inode, at - seg.vaddr + seg.offset, uc);
          if (r.errno === 0) probes++;
          else {
            assert.match(r.reason ?? '', /cannot be (probed|stepped)/, `${s.name}+0x${(at - s.value).toString(16)} ${d.mnemonic}`);
            refused.add(d.mnemonic);
          }
          at += BigInt(d.length);
        }
      }
      assert.ok(probes > 100);
      // the only refusals: the system call instruction (and breakpoints / halts, none in C code)
      for (const mn of refused) assert.match(mn, /^(syscall|svc|ecall|hlt|int3|ud2|brk|ebreak)/);
      const got = get();
      assert.deepEqual(got, plain);
      assert.deepEqual(got, golden);
      assert.ok(hits > 500, `${hits} hits`);
      for (const [name, n] of entries) assert.equal(rets.get(name) ?? 0, UNPAIRED[name]?.(n) ?? n, `${name}: returns for ${n} entries`);
      assert.equal(m.uprobes.stats.hits, hits);
      assert.equal(m.uprobes.stats.xolSteps + m.uprobes.stats.simulated, hits, 'every hit stepped or simulated');
      for (const u of m.uprobes.list()) assert.equal(u.nmissed, 0);
    });
  });
}
