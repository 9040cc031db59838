/**
 * kprobe-run with kwatch lines: `--probes` registers them (a refusal is one
 * line on stderr, the run goes on), the handler prints, `--list` names each
 * kwatch's debug register, address, len and type with its hits.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { loadElf } from '../../emulator/elf';
import { repoPath } from '../util/paths';

const IMAGE = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const bootCounter = loadElf(IMAGE).symbols.lookup('boot_counter')!.value;

const tmp = mkdtempSync(join(tmpdir(), 'kprobe-cli-kwatch-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('kprobe-run --probes with kwatch', () => {
  test('kwatch lines register, print and are listed with their register; a refused one is one stderr line', async () => {
    const f = join(tmp, 'w.kprobe');
    writeFileSync(f, 'kwatch boot_counter len=8 type=w { if (new == 96) printk("boot_counter reached %lu\\n", new); }\nkwatch boot_counter len=3 type=w { }\n');
    const c = captureIo();
    const code = await runCli(['run', IMAGE, '--probes', f, '--list'], c.io);
    assert.equal(code, 0, c.stderr());
    assert.match(c.stdout(), /^boot_counter reached 96$/m);
    assert.match(c.stderr(), new RegExp(`^${f.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:1: kwatch boot_counter: register_kwatch failed: -EINVAL \\(.*not 3\\)$`, 'm'));
    assert.match(c.stdout(), new RegExp(`:1:1 kwatch boot_counter \\(DR0, 0x${bootCounter.toString(16)} len 8 type w\\): 96 hits, 0 missed$`, 'm'));
    assert.match(c.stdout(), /:2:1 kwatch boot_counter \(0x[0-9a-f]+ len 3 type w\): not registered$/m);
  });

  test('a kwatch with a missing len stops the run before boot with file:line:col', async () => {
    const f = join(tmp, 'bad.kprobe');
    writeFileSync(f, 'kwatch boot_counter type=w { }\n');
    const c = captureIo();
    assert.equal(await runCli(['run', IMAGE, '--probes', f], c.io), 1);
    assert.match(c.stderr(), /bad\.kprobe:1:1: a kwatch needs len=N/);
  });
});
