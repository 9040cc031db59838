/**
 * CLI polish (a mistyped command, option or symbol says what to type): an
 * unknown command is named as one with the list of commands; `run --help`
 * describes every option; misspelled symbols get a "did you mean"; nm-like
 * symbol listings; an unknown symbol in one probe of a .kprobe file is that
 * probe's -ENOENT while the others run; `run --probes f.kprobe` without IMAGE
 * boots the image of the file's header.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../emulator/cli/main';
import { captureIo } from '../../../emulator/cli/io';
import { commands } from '../../../emulator/cli/commands';
import { runOptions } from '../../../emulator/cli/commands/runOptions';
import { loadElf } from '../../../emulator/elf';
import { editDistance, nearestNames } from '../../../emulator/elf/nearNames';
import { KPROBES_SYSCTLS } from '../../../emulator/kprobes';
import { repoPath } from '../../util/paths';

const IMAGE = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const COMMANDS = [...commands.keys()].sort().join(', ');

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo();
  const code = await runCli(argv, c.io);
  return { code, out: c.stdout(), err: c.stderr() };
}

const tmp = mkdtempSync(join(tmpdir(), 'kprobe-cli-polish-'));
after(() => rmSync(tmp, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const p = join(tmp, name);
  writeFileSync(p, text);
  return p;
}

describe('kprobe-run: unknown commands', () => {
  test('`kprobe-run rnu` names an unknown command, suggests run and lists the commands', async () => {
    const r = await cli('rnu');
    assert.equal(r.code, 1);
    assert.equal(r.out, '');
    assert.equal(r.err, `kprobe-run: unknown command 'rnu' (and no file of that name), did you mean 'run'? (commands: ${COMMANDS}; see kprobe-run --help)\n`);
  });

  test('`kprobe-run help snym` and a word with no near command', async () => {
    const h = await cli('help', 'snym');
    assert.equal(h.code, 1);
    assert.match(h.err, /^kprobe-run: unknown command 'snym', did you mean 'sym'\? \(commands: /);
    const w = await cli('frobnicate');
    assert.equal(w.err, `kprobe-run: unknown command 'frobnicate' (and no file of that name) (commands: ${COMMANDS}; see kprobe-run --help)\n`);
  });

  test('a path still means `run IMAGE`: missing files are reported as files', async () => {
    const r = await cli(join(tmp, 'nowhere.elf'));
    assert.equal(r.code, 1);
    assert.match(r.err, /nowhere\.elf: no such file\n$/);
  });
});

describe('kprobe-run run --help', () => {
  test('describes every option with its value, what it does, and which repeat', async () => {
    const r = await cli('run', '--help');
    assert.equal(r.code, 0);
    assert.equal(r.err, '');
    for (const o of runOptions('run')) {
      const at = r.out.indexOf(`\n  ${o.arg ? `${o.name} ${o.arg}` : o.name}\n      `);
      assert.ok(at > 0, `${o.name} described in ${r.out}`);
    }
    const section = (name: string): string => {
      const from = r.out.indexOf(`\n  ${name}`);
      const to = r.out.indexOf('\n  --', from + 3);
      return r.out.slice(from, to < 0 ? undefined : to).replace(/\s+/g, ' ');
    };
    assert.match(section('--quantum'), /instructions each CPU runs per turn .* default 10000/);
    assert.match(section('--stats'), /"instructions: N" .* "seconds: S" .* stderr/);
    assert.match(section('--probes'), /\(repeatable\)/);
    assert.match(section('--probes'), /`image "\.\.\."` header/);
    assert.match(section('--sysctl'), /\(repeatable\)/);
    for (const s of KPROBES_SYSCTLS) assert.ok(section('--sysctl').includes(`${s}=0|1`), s);
    assert.match(section('--max-instructions'), /124/);
    assert.match(r.out, /Without it, the image named by the `image "\.\.\."` header of the --probes files/);
  });

  test('help run, exec --help, sym --help, info --help describe their arguments', async () => {
    assert.equal((await cli('help', 'run')).out, (await cli('run', '--help')).out);
    assert.match((await cli('exec', '--help')).out, /--max-instructions N\n/);
    assert.match((await cli('sym', '--help')).out, /--list \[PATTERN\]/);
    assert.match((await cli('info', '--help')).out, /--symbols/);
  });
});

describe('kprobe-run: misspelled symbols and symbol listings', () => {
  test('did you mean: edit distance with transpositions', () => {
    assert.equal(editDistance('sys_opne', 'sys_open'), 1);
    assert.equal(editDistance('do_frok', 'do_fork'), 1);
    assert.equal(editDistance('kitten', 'sitting'), 3);
    assert.deepEqual(nearestNames('do_frok', ['do_fork', 'do_exit', 'nr_forks']), ['do_fork']);
    assert.deepEqual(nearestNames('xyz', ['do_fork']), []);
  });

  test('sym: sys_opne and do_frok get a did-you-mean; a substring still lists similar names', async () => {
    for (const [typo, right] of [['sys_opne', 'sys_open'], ['do_frok', 'do_fork']]) {
      const r = await cli('sym', IMAGE, typo);
      assert.equal(r.code, 1);
      assert.equal(r.err, `kprobe-run: ${IMAGE}: no symbol named ${typo} (did you mean '${right}'?)\n`);
    }
    assert.match((await cli('sym', IMAGE, 'do_frok+0x4')).err, /no symbol named do_frok \(did you mean 'do_fork'\?\)/);
    assert.match((await cli('sym', IMAGE, 'fork')).err, /no symbol named fork \(similar: .*do_fork/);
  });

  test('sym IMAGE --list [PATTERN] and info IMAGE --symbols: nm-like, ascending by address', async () => {
    const img = loadElf(IMAGE);
    const r = await cli('sym', IMAGE, '--list');
    assert.equal(r.code, 0);
    const lines = r.out.trimEnd().split('\n');
    for (const l of lines) assert.match(l, /^[0-9a-f]{16} [0-9a-f]{16} [TtDdBbRrAaUWwVv] \S+$/);
    const addrs = lines.map(l => BigInt('0x' + l.slice(0, 16)));
    for (let i = 1; i < addrs.length; i++) assert.ok(addrs[i - 1] <= addrs[i]);
    const fork = img.symbols.lookup('do_fork')!;
    assert.ok(lines.includes(`${fork.value.toString(16)} ${fork.size.toString(16).padStart(16, '0')} T do_fork`));
    assert.ok(lines.some(l => / b nr_forks$/.test(l)), 'a local bss object');
    assert.ok(!lines.some(l => / fork\.c$/.test(l)), 'no file symbols');
    const only = await cli('sym', IMAGE, '--list', 'fork');
    assert.ok(only.out.trimEnd().split('\n').every(l => l.includes('fork')));
    assert.ok(only.out.includes(' T do_fork\n'));
    assert.match((await cli('sym', IMAGE, '--list', 'zzzz_none')).err, /no symbol name contains 'zzzz_none'/);
    const info = await cli('info', IMAGE, '--symbols');
    assert.equal(info.code, 0);
    assert.ok(info.out.endsWith(`\n\n${r.out}`), 'info --symbols ends with the same listing');
  });
});

describe('kprobe-run run --probes: per-probe symbol failures and the image header', () => {
  test('an unknown symbol fails that probe alone with -ENOENT and a did-you-mean; the others run', async () => {
    const f = file('typo.kprobe', [
      'kprobe do_frok { pre { printk("never\\n"); return 0; } }',
      'kprobe kprobe_target2 { pre { printk("t2 %u\\n", (u32)arg0); return 0; } }',
      'kretprobe sys_opne { return { return 0; } }',
    ].join('\n'));
    const r = await cli('run', IMAGE, '--probes', f, '--list');
    assert.equal(r.code, 0);
    assert.equal(r.err, [
      `${f}:1:1: kprobe do_frok: register_kprobe failed: -ENOENT (unknown symbol 'do_frok') (did you mean 'do_fork'?)`,
      `${f}:3:1: kretprobe sys_opne: register_kretprobe failed: -ENOENT (unknown symbol 'sys_opne') (did you mean 'sys_open'?)`,
      '',
    ].join('\n'));
    assert.ok(r.out.split('\n').includes('t2 625341585'));
    assert.ok(!r.out.includes('never'));
    assert.ok(r.out.includes(`${f}:1:1 kprobe do_frok: not registered\n`));
  });

  test('without IMAGE, the image named by the file\'s header boots (relative to the file), not the sample kernel', async () => {
    const dir = mkdtempSync(join(tmp, 'hdr-'));
    copyFileSync(IMAGE, join(dir, 'k.elf'));
    const f = join(dir, 'p.kprobe');
    writeFileSync(f, 'image "k.elf"\nkprobe kprobe_target2 { pre { printk("t2 %u\\n", (u32)arg0); return 0; } }\n');
    const r = await cli('run', '--probes', f);
    assert.equal(r.code, 0);
    assert.equal(r.err, '', 'no "written for image" warning: the header\'s image is the one running');
    assert.ok(r.out.split('\n').includes('t2 625341585'));
    // a header naming a missing image is that image's error
    const g = file('missing-image.kprobe', 'image "nowhere/k.elf"\nkprobe do_fork { pre { return 0; } }\n');
    const m = await cli('run', '--probes', g);
    assert.equal(m.code, 1);
    assert.equal(m.err, `kprobe-run: ${join(tmp, 'nowhere', 'k.elf')}: no such file\n`);
    // two files naming different images: say so instead of picking one
    const h = file('other.kprobe', `image "${IMAGE}"\nkprobe do_fork { pre { return 0; } }\n`);
    const two = await cli('run', '--probes', f, '--probes', h);
    assert.equal(two.code, 1);
    assert.match(two.err, /^kprobe-run: run: no IMAGE given and the probe files name different images: /);
    // an explicit IMAGE wins over the header (with the existing warning)
    const x = await cli('run', IMAGE, '--probes', g);
    assert.equal(x.code, 0);
    assert.match(x.err, /warning: written for image nowhere\/k\.elf/);
  });
});
