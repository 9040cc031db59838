/**
 * A .kprobe file of 2,000 probes through `kprobe-run run --probes FILE
 * --list` on the sample kernel of every arch (the instruction starts of its
 * functions in address order, each `pre { return 0; }`, as
 * scripts/bench/probeFileCli.ts makes its files): every probe registered or
 * refused with its message, the same console, kprobes list and probe-hits
 * lines from the CLI as from the same run made here step by step, and the
 * probe-hits lines the same as the probe list's full entries give them.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { newRunContext, parseRunArgs } from '../../emulator/cli/commands/runOptions';
import { runMachine } from '../../emulator/cli/commands/run';
import { loadElf } from '../../emulator/elf';
import { Machine } from '../../emulator/machine';
import { attachProbes, probesOf } from '../../emulator/probes/attach';
import type { ProbeEntry } from '../../emulator/probes';
import { hex } from '../../emulator/memory/address';
import { repoPath } from '../util/paths';

const N = 2000;
const ARCHES = ['x86_64', 'aarch64', 'riscv64'] as const;

/** the first n instruction starts of the image's sized functions, in address order, as SYM+0xOFF */
function instructionStarts(imagePath: string, n: number): string[] {
  const image = loadElf(imagePath);
  const m = new Machine(image, { cpus: 1 });
  const out: string[] = [];
  const fns = [...image.symbols.functions()].filter(f => f.size > 0n).sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  for (const s of fns) {
    for (let p = s.value; p < s.value + s.size && out.length < n;) {
      const d = m.arch.decode(m.kernel.mem, p);
      if (!d) break;
      out.push(`${s.name}+0x${(p - s.value).toString(16)}`);
      p += BigInt(d.length);
    }
  }
  assert.equal(out.length, n, `${imagePath} has fewer than ${n} instruction starts`);
  return out;
}

/** a probe-hits line as the probe list's full entry (ProbeEntry, with its sites) gives it */
function entryLine(p: ProbeEntry): string {
  const at = p.file ? `${p.file.name}:${p.file.line}:${p.file.column}` : `breakpoint ${p.id}`;
  const gone = p.sites.some(s => s.flags.includes('[GONE]'));
  const w = p.watch;
  const state = !p.verified ? 'not registered' : `${p.hits} hit${p.hits === 1 ? '' : 's'}, ${p.nmissed} missed${gone ? ' [GONE]' : p.enabled ? (w?.suspended ? ' [SUSPENDED]' : '') : ' [DISABLED]'}`;
  const reg = w ? ` (${w.registerName ? `${w.registerName}, ` : ''}${hex(w.addr)} len ${w.len} type ${w.type})` : '';
  return `${at} ${p.kind} ${p.target}${p.sites.length > 1 ? ` (${p.sites.length} sites)` : ''}${reg}: ${state}\n`;
}

describe(`kprobe-run run --probes: a file of ${N} probes on every arch`, () => {
  for (const arch of ARCHES) {
    test(`${arch}: registered or refused with their messages; the CLI's --list and console as the run made here and as the full entries give them`, async () => {
      const image = repoPath(`examples/kernel/build/kernel-${arch}.elf`);
      const targets = instructionStarts(image, N);
      const dir = mkdtempSync(join(tmpdir(), 'kp-scale-'));
      try {
        const file = join(dir, `${arch}.kprobe`);
        writeFileSync(file, `image "${image}"\n${targets.map(t => `kprobe ${t} { pre { return 0; } }\n`).join('')}`);
        const args = ['--probes', file, '--list'];

        // the CLI
        const c = captureIo();
        const code = await runCli(['run', ...args], c.io);
        assert.equal(code, 0, c.stderr());

        // the same run step by step (run.ts), keeping the machine
        const ctx = newRunContext();
        parseRunArgs('run', args, ctx, false);
        const m = new Machine(loadElf(image), ctx.machine);
        attachProbes(m);
        const h = captureIo();
        m.onPrintk(r => (r.source === 'emulator' ? h.io.err : h.io.out)(r.text + '\n'));
        const { exit } = await runMachine(m, ctx, h.io);
        assert.equal(exit.reason, 'poweroff');
        assert.equal(c.stdout(), h.stdout(), 'the CLI prints what the same run made here prints');
        assert.equal(c.stderr(), h.stderr());

        // every probe has its line, in file order; the refused ones are exactly those with an error line
        const out = c.stdout();
        const hits = out.slice(out.indexOf('# probe hits\n') + '# probe hits\n'.length).split('\n').filter(Boolean);
        assert.equal(hits.length, N);
        const failed = new Set(c.stderr().split('\n').filter(l => l.includes(': register_kprobe failed: ')).map(l => l.split(': ')[0]));
        hits.forEach((l, i) => {
          const at = `${file}:${i + 2}:1`;
          assert.ok(l.startsWith(`${at} kprobe ${targets[i].replace(/\+0x0$/, '')}: `), l); // SYM+0x0 is listed as SYM
          assert.equal(l.endsWith(': not registered'), failed.has(at), l);
        });
        assert.ok(failed.size > 0 && failed.size < N / 10, `${failed.size} refused`);
        // the kprobes list: one row per registered probe
        const list = out.slice(out.indexOf('# cat /sys/kernel/debug/kprobes/list\n'), out.indexOf('# cat /sys/kernel/debug/kprobes/enabled\n')).split('\n').slice(1).filter(Boolean);
        assert.equal(list.length, N - failed.size);
        assert.ok(hits.some(l => / [1-9]\d* hits?, /.test(l)), 'some probes were hit');

        // the probe-hits lines as the full entries give them
        const mgr = probesOf(m);
        assert.equal(hits.map(l => `${l}\n`).join(''), mgr.list().map(entryLine).join(''));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
