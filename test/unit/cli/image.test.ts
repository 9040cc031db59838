/**
 * kprobe-run's image commands (info, sym, lines) and its top level (help,
 * default command, one-line errors), through runCli with a capturing io;
 * one test runs the bundled CLI as a process for the exit code.
 */
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { runCli } from '../../../emulator/cli/main';
import { CliCommand, CommandRegistry, captureIo } from '../../../emulator/cli/io';
import { commands } from '../../../emulator/cli/commands';
import { loadElf } from '../../../emulator/elf';
import { GOLDEN_DIR, fixture, markerLine, parseReadelf } from '../../fixtures/elf/goldens';
import { repoPath } from '../../util/paths';

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureIo();
  const code = await runCli(argv, c.io);
  return { code, out: c.stdout(), err: c.stderr() };
}

/** exit 1, nothing on stdout, exactly one stderr line "kprobe-run: <pattern>" */
function assertError(r: { code: number; out: string; err: string }, pattern: RegExp): void {
  assert.equal(r.code, 1);
  assert.equal(r.out, '');
  assert.match(r.err, /^kprobe-run: [^\n]+\n$/, 'one line');
  assert.match(r.err, pattern);
  assert.ok(!/\bat .+:\d+:\d+/.test(r.err), 'no stack trace');
}

const X86 = fixture('x86_64.elf');
const tmp = mkdtempSync(join(tmpdir(), 'kprobe-cli-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

describe('kprobe-run top level', () => {
  test('--help lists every registered command with its usage', async () => {
    const r = await cli('--help');
    assert.equal(r.code, 0);
    assert.equal(r.err, '');
    for (const [name, c] of commands) assert.ok(r.out.includes(`${name} ${c.usage}`), name);
    for (const name of ['info', 'sym', 'lines']) assert.ok(commands.has(name), name);
  });

  test('COMMAND --help prints that command\'s usage', async () => {
    const r = await cli('lines', '--help');
    assert.equal(r.code, 0);
    assert.match(r.out, /^usage: kprobe-run lines IMAGE FILE:LINE\n/);
  });

  const fake = (log: string[][]): CliCommand => ({ summary: 'fake run', usage: '[IMAGE]', run: async (args) => { log.push(args); return 7; } });

  test('a first argument that is not a command means `run`; no arguments means `run` with none', async () => {
    const log: string[][] = [];
    const reg: CommandRegistry = new Map([...commands, ['run', fake(log)]]);
    const c = captureIo();
    assert.equal(await runCli(['kernel.elf', '--cpus', '2'], c.io, reg), 7);
    assert.equal(await runCli([], c.io, reg), 7);
    assert.equal(await runCli(['info', X86], c.io, reg), 0);
    assert.deepEqual(log, [['kernel.elf', '--cpus', '2'], []]);
    assert.match(c.stdout(), /^usage: |arch: {6}x86_64/m);
  });

  test('without a `run` command: no arguments prints usage, an unknown command is an error', async () => {
    const reg: CommandRegistry = new Map([...commands].filter(([n]) => n !== 'run'));
    const c = captureIo();
    assert.equal(await runCli([], c.io, reg), 1);
    assert.match(c.stderr(), /^usage: kprobe-run/);
    const d = captureIo();
    assert.equal(await runCli(['frobnicate'], d.io, reg), 1);
    assert.equal(d.stderr(), `kprobe-run: unknown command 'frobnicate' (commands: ${[...reg.keys()].sort().join(', ')}; see kprobe-run --help)\n`);
  });

  test('an unexpected exception is one "internal error" line, exit 1', async () => {
    const reg: CommandRegistry = new Map([['boom', { summary: '', usage: '', run: async () => { throw new TypeError('x is not a function\n    at foo (bar.js:1:2)'); } }]]);
    const c = captureIo();
    assert.equal(await runCli(['boom'], c.io, reg), 1);
    assertError({ code: 1, out: c.stdout(), err: c.stderr() }, /^kprobe-run: internal error: x is not a function/);
  });

  test('the bundled CLI as a process: exit code 0 / 1, error on stderr without a stack trace', () => {
    const out = join(tmp, 'cli.js');
    const esbuild = spawnSync(repoPath('node_modules', '.bin', 'esbuild'), [repoPath('emulator', 'cli', 'main.ts'),
      '--bundle', '--platform=node', '--format=cjs', '--log-level=warning', `--outfile=${out}`], { encoding: 'utf8' });
    assert.equal(esbuild.status, 0, esbuild.stderr);
    const ok = spawnSync(process.execPath, [out, 'sym', X86, 'do_fork'], { encoding: 'utf8' });
    assert.equal(ok.status, 0, ok.stderr);
    assert.match(ok.stdout, /^0xffffffff81[0-9a-f]{6} do_fork size 0x[0-9a-f]+ func\n$/);
    const bad = spawnSync(process.execPath, [out, 'info', fixture('../src/main.c')], { encoding: 'utf8' });
    assert.equal(bad.status, 1);
    assert.equal(bad.stdout, '');
    assert.match(bad.stderr, /^kprobe-run: .*main\.c: not an ELF file \(bad magic\)\n$/);
  });
});

describe('kprobe-run info', () => {
  test('x86_64 image: arch, class, type, full 64-bit entry, LOAD segments, counts, debug info', async () => {
    const r = await cli('info', X86);
    assert.equal(r.code, 0, r.err);
    const g = parseReadelf(readFileSync(join(GOLDEN_DIR, 'x86_64.readelf.txt'), 'utf8'));
    assert.match(r.out, /^arch: +x86_64 \(e_machine 62\)$/m);
    assert.match(r.out, /^class: +ELF64, little endian$/m);
    assert.match(r.out, /^type: +EXEC/m);
    assert.ok(r.out.includes(`entry:     0x${g.entry.toString(16)}\n`), r.out);
    const loads = g.segments.filter((s) => s.type === 'LOAD');
    for (const s of loads) assert.ok(r.out.includes(`LOAD vaddr 0x${s.vaddr.toString(16)} memsz 0x${s.memsz.toString(16)} `), `LOAD ${s.vaddr}`);
    assert.equal(r.out.match(/^ {2}LOAD /gm)!.length, loads.length);
    assert.match(r.out, new RegExp(`^sections: +${g.sections.length}$`, 'm'));
    assert.match(r.out, new RegExp(`^symbols: +${loadElf(X86).symbols.count} \\(\\.symtab\\)`, 'm'));
    assert.match(r.out, /^debug line info: yes \(\d+ rows, 2 source files\)$/m);
  });

  test('an unsupported machine is still described (ELF32 big-endian powerpc)', async () => {
    const r = await cli('info', fixture('ppc32be.elf'));
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^arch: +ppc \(e_machine 20\)$/m);
    assert.match(r.out, /^class: +ELF32, big endian$/m);
  });

  test('stripped and debug-less images', async () => {
    const s = await cli('info', fixture('x86_64-stripped.elf'));
    assert.match(s.out, /^symbols: +0 \(none: stripped\)/m);
    assert.match(s.out, /^debug line info: no/m);
    const n = await cli('info', fixture('x86_64-nodebug.elf'));
    assert.match(n.out, /^debug line info: no/m);
  });

  test('not an ELF file / truncated / missing / wrong arguments', async () => {
    const notElf = fixture('../src/main.c');
    assertError(await cli('info', notElf), new RegExp(`^kprobe-run: ${notElf.replace(/[.]/g, '\\.')}: not an ELF file \\(bad magic\\)\\n$`));
    const trunc = join(tmp, 'truncated.elf');
    writeFileSync(trunc, readFileSync(X86).subarray(0, 200));
    assertError(await cli('info', trunc), /truncated\.elf: truncated: /);
    assertError(await cli('info', join(tmp, 'missing.elf')), /missing\.elf: no such file\n$/);
    assertError(await cli('info'), /^kprobe-run: info: expected one argument: IMAGE\n$/);
  });
});

describe('kprobe-run sym', () => {
  const img = loadElf(X86);
  const f = img.symbols.lookup('do_fork')!;
  const hex = (v: bigint) => '0x' + v.toString(16);

  test('NAME -> address, size, type', async () => {
    const r = await cli('sym', X86, 'do_fork');
    assert.equal(r.code, 0, r.err);
    assert.equal(r.out, `${hex(f.value)} do_fork size ${hex(f.size)} func\n`);
  });

  test('a repeated NAME lists the global first, then the local', async () => {
    const r = await cli('sym', X86, 'twin');
    const lines = r.out.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(lines[0], /^0x[0-9a-f]+ twin size 0x[0-9a-f]+ func$/);
    assert.match(lines[1], /^0x[0-9a-f]+ twin size 0x[0-9a-f]+ func \(local\)$/);
  });

  test('ADDR -> symbol+0xoff/0xsize, and NAME+OFF -> address', async () => {
    const r = await cli('sym', X86, hex(f.value + 4n));
    assert.equal(r.out, `do_fork+0x4/${hex(f.size)}\n`);
    const p = await cli('sym', X86, 'do_fork+0x4');
    assert.equal(p.out, `${hex(f.value + 4n)} do_fork+0x4/${hex(f.size)}\n`);
  });

  test('errors: unknown name, address outside every symbol, stripped image, arguments', async () => {
    assertError(await cli('sym', X86, 'fork'), /x86_64\.elf: no symbol named fork \(similar: do_fork\)\n$/);
    assertError(await cli('sym', X86, '0x10'), /x86_64\.elf: no symbol contains address 0x10\n$/);
    assertError(await cli('sym', fixture('x86_64-stripped.elf'), 'do_fork'), /x86_64-stripped\.elf: no symbol table/);
    assertError(await cli('sym', X86), /^kprobe-run: sym: expected two arguments/);
  });

  test('an address or NAME+OFF beyond 64 bits is a one-line error naming the argument', async () => {
    assertError(await cli('sym', X86, 'do_fork+0xffffffffffffffff'),
      new RegExp(`^kprobe-run: sym: do_fork\\+0xffffffffffffffff: do_fork \\(${hex(f.value)}\\) \\+ offset 0xffffffffffffffff does not fit in 64 bits\n$`));
    assertError(await cli('sym', X86, 'do_fork+18446744073709551616'), /^kprobe-run: sym: do_fork\+18446744073709551616: .* does not fit in 64 bits\n$/);
    assertError(await cli('sym', X86, '0x1ffffffffffffffff'), /^kprobe-run: sym: address 0x1ffffffffffffffff does not fit in 64 bits\n$/);
    assertError(await cli('sym', X86, '18446744073709551616'), /^kprobe-run: sym: address 18446744073709551616 does not fit in 64 bits\n$/);
    // the largest offset that still fits is accepted
    const max = (1n << 64n) - 1n - f.value;
    const r = await cli('sym', X86, `do_fork+${hex(max)}`);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^0xffffffffffffffff /);
  });

  test('works on an image of an unsupported machine', async () => {
    const r = await cli('sym', fixture('ppc32be.elf'), 'do_fork');
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /^0x[0-9a-f]+ do_fork size 0x[0-9a-f]+ func\n$/);
  });
});

describe('kprobe-run lines', () => {
  const CALL = markerLine('main.c', 'CALL_HELPER');
  const NOCODE = markerLine('main.c', 'NOCODE');

  for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
    test(`${arch}: every is_stmt address of FILE:LINE, ascending, one per line`, async () => {
      const img = fixture(`${arch}.elf`);
      const want = loadElf(img).lines!.addressesForLine('main.c', CALL);
      assert.ok(want.length > 0);
      const r = await cli('lines', img, `main.c:${CALL}`);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, want.map((a) => `0x${a.toString(16)}\n`).join(''));
      const abs = await cli('lines', img, `/fixtures/elf/src/main.c:${CALL}`);
      assert.equal(abs.out, r.out);
    });
  }

  test('a line with no code names the next line with code', async () => {
    const next = loadElf(X86).lines!.nextLineWithCode('main.c', NOCODE)!;
    assertError(await cli('lines', X86, `main.c:${NOCODE}`),
      new RegExp(`^kprobe-run: .*x86_64\\.elf: main\\.c:${NOCODE} has no code \\(next line with code: ${next}\\)\\n$`));
    assertError(await cli('lines', X86, 'main.c:99999'), /main\.c:99999 has no code \(no line with code after it\)/);
  });

  test('errors: no debug info, unknown file, bad location', async () => {
    assertError(await cli('lines', fixture('x86_64-nodebug.elf'), `main.c:${CALL}`), /x86_64-nodebug\.elf: no debug info \(\.debug_line missing/);
    assertError(await cli('lines', X86, 'nope.c:3'), /x86_64\.elf: no source file nope\.c in the line table \(files: \/fixtures\/elf\/src\/helper\.c, \/fixtures\/elf\/src\/main\.c\)\n$/);
    assertError(await cli('lines', X86, 'main.c'), /^kprobe-run: lines: bad location 'main\.c': expected FILE:LINE/);
    assertError(await cli('lines', X86, 'main.c:0'), /bad location/);
  });

  test('the sample kernels: a breakpoint line of each arch has code', async () => {
    for (const arch of ['x86_64', 'aarch64', 'riscv64']) {
      const img = repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);
      const lines = loadElf(img).lines!;
      const file = lines.files().find((f) => f.endsWith('main.c'))!;
      const line = lines.rows().find((r) => r.file === file && r.isStmt && !r.endSequence)!.line;
      const r = await cli('lines', img, `main.c:${line}`);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, lines.addressesForLine('main.c', line).map((a) => `0x${a.toString(16)}\n`).join(''));
    }
  });
});

describe('an image for an architecture without a port (arm32)', () => {
  test('run and exec say so in one line, nothing runs', async () => {
    const image = repoPath('test', 'fixtures', 'elf', 'bin', 'arm32.elf');
    for (const cmd of ['run', 'exec']) {
      const c = captureIo();
      const code = await runCli([cmd, image], c.io);
      assert.notEqual(code, 0);
      assert.equal(c.stdout(), '');
      assert.equal(c.stderr(), `kprobe-run: ${image}: unsupported machine arm: no CPU emulator for this architecture yet\n`);
    }
  });
});
