/**
 * uprobes on a program nobody here wrote (not built for these tests):
 * Debian's stripped busybox-static (test/userspace/debian/fetch.sh) with a
 * uprobe on its entry point, as perf would place one by file offset. Every
 * busybox process (the shell and the children it forks) then has the XOL
 * area: `cat /proc/self/maps` run under the probe prints exactly what it
 * prints without it plus one `[uprobes]` line, and a pipeline's output is the
 * same with and without the probe.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { repoPath } from '../util/paths';
import { unfetched } from '../util/fetched';

const DEB = repoPath('test', 'userspace', 'debian');
const PT_LOAD = 1;

function run(bb: string, script: string, probe: boolean): { out: string; hits: number } {
  const image = loadElf(bb);
  let out = '';
  const m = Machine.forUserProgram(image, [bb, 'sh', '-c', script], {
    stdout: b => { out += Buffer.from(b).toString(); }, stderr: b => { out += Buffer.from(b).toString(); },
  }, { cpus: 2 });
  let hits = 0;
  if (probe) {
    const seg = image.segments.find(s => s.type === PT_LOAD && image.entry >= s.vaddr && image.entry < s.vaddr + s.filesz);
    assert.ok(seg);
    const r = m.uprobes.register(m.kernel.processes.get(1)!.exe!, image.entry - seg.vaddr + seg.offset, { handler: () => { hits++; return 0; } });
    assert.equal(r.errno, 0, r.reason);
  }
  const e = m.run();
  assert.equal(e.code, 0, out);
  return { out, hits };
}

describe('uprobes on Debian busybox-static (fetch: test/userspace/debian/fetch.sh)', () => {
  for (const arch of ['amd64', 'arm64']) {
    test(`${arch}: a uprobe at the entry point: /proc/self/maps gains [uprobes], a pipeline's output is unchanged`, t => {
      const bb = join(DEB, 'cache', arch, 'bin', 'busybox');
      if (!existsSync(bb)) spawnSync(join(DEB, 'fetch.sh'), { stdio: 'ignore', timeout: 300_000 });
      if (!existsSync(bb)) { unfetched(t, 'busybox-static could not be fetched (offline?): run test/userspace/debian/fetch.sh'); return; }
      const script = 'cat /proc/self/maps; echo b a c | tr " " "\\n" | sort | head -n 2';
      const plain = run(bb, script, false);
      const probed = run(bb, script, true);
      assert.ok(probed.hits >= 1);
      const plainLines = plain.out.split('\n');
      const probedLines = probed.out.split('\n');
      const xol = probedLines.filter(l => l.endsWith(' [uprobes]'));
      assert.equal(xol.length, 1, probed.out);
      assert.match(xol[0], /^[0-9a-f]{8,}-[0-9a-f]{8,} r-xp 00000000 00:00 0 +\[uprobes\]$/);
      assert.deepEqual(probedLines.filter(l => !l.endsWith(' [uprobes]')), plainLines, 'the rest of the maps and the output are the same');
      assert.match(plain.out, /r-xp [0-9a-f]{8} 00:01 \d+ +\/\S+\/busybox\n/);
      assert.ok(plain.out.endsWith('a\nb\n'), plain.out);
    });
  }
});
