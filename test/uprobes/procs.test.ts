/**
 * uprobes under the whole user space (probes on every function of real
 * programs): the procs and fpstr conformance programs (files, pipes, fork,
 * exec of itself, kill, signal handlers and masks, SIGPIPE; floating point
 * and vectorised loops) run with a uprobe and a uretprobe on every function
 * entry. Their output must be byte-identical to qemu-user's golden (the same
 * text the unprobed runs give): breakpoints, out-of-line steps (signals held
 * back during them, as uprobe_deny_signal does), return hijacks and
 * per-process page copies must be invisible to the program.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';

const DIR = repoPath('test', 'userspace');
const PT_LOAD = 1, PF_X = 1;

/** what a Linux kernel prints where qemu-aarch64 cannot exec an aarch64 binary on this host (see userspace.test.ts) */
const QEMU_EXEC_FAILED: [string, string] = ['exec child exit 99\n', 'exec child: argc 3 [procs-child] [exec-child] [two words] env K=v\nexec child exit 3\n'];

for (const name of ['procs-x86_64-gcc-O2', 'procs-x86_64-clang-O0', 'procs-aarch64-gcc-O2', 'fpstr-x86_64-clang-O3', 'fpstr-aarch64-gcc-O2']) {
  describe(`${name} with a uprobe and a uretprobe on every function`, () => {
    test('output = qemu-user\'s golden; every function hit', () => {
      const path = join(DIR, 'bin', `${name}.elf`);
      const image = loadElf(path);
      let out = '';
      let err = '';
      const m = Machine.forUserProgram(image, [path], {
        stdout: b => { out += Buffer.from(b).toString('latin1'); }, stderr: b => { err += Buffer.from(b).toString(); },
      }, { cpus: 2 });
      const inode = m.kernel.processes.get(1)!.exe!;
      const text = image.segments.find(s => s.type === PT_LOAD && (s.flags & PF_X) !== 0)!;
      const funcs = image.symbols.all().filter(s => s.type === 'func' && s.size > 0n && s.value >= text.vaddr && s.value < text.vaddr + text.filesz);
      let entries = 0, returns = 0, registered = 0;
      const refused: string[] = [];
      for (const f of funcs) {
        const r = m.uprobes.register(inode, f.value - text.vaddr + text.offset, {
          handler: () => { entries++; return 0; },
          ret_handler: () => { returns++; return 0; },
        });
        if (r.errno === 0) registered++;
        else refused.push(`${f.name}: ${r.reason}`);
      }
      assert.ok(registered >= funcs.length - 2, refused.join('\n'));
      const exit = m.run();
      let want = readFileSync(join(DIR, 'golden', `${name}.out`), 'latin1');
      if (name.startsWith('procs-aarch64')) want = want.replace(QEMU_EXEC_FAILED[0], QEMU_EXEC_FAILED[1]);
      assert.equal(err, '');
      assert.equal(out, want);
      assert.equal(exit.code, Number(readFileSync(join(DIR, 'golden', `${name}.code`), 'utf8').trim()));
      assert.ok(entries >= 20 && returns > 0 && returns <= entries, `entries ${entries}, returns ${returns}`);
      // every process ended: no per-process state is left
      for (const u of m.uprobes.list()) assert.equal(u.insertions.size, 0, `${u.path}:0x${u.offset.toString(16)}`);
    });
  });
}
