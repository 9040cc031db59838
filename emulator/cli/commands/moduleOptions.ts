/**
 * Module options of `kprobe-run run` (C modules that register kprobes):
 *
 *   --module "FILE.ko [name=value]..."   (repeatable) insmod after boot, in
 *                                        order: each init runs when the
 *                                        previous one has returned. A module
 *                                        that cannot be loaded is one line on
 *                                        stderr (Linux's message) and the run
 *                                        goes on, as a failed insmod leaves
 *                                        the kernel running.
 *   --at N:rmmod=NAME                    after N instructions, rmmod NAME
 *                                        (refusals are one line on stderr).
 */
import { readFileSync } from 'node:fs';
import type { Machine } from '../../machine';
import { CliError, CliIo } from '../io';
import { registerRunOption, RunContext } from './runOptions';

function insmod(m: Machine, io: CliIo, spec: string): void {
  const [file, ...params] = spec.trim().split(/\s+/);
  let bytes: Uint8Array;
  try { bytes = new Uint8Array(readFileSync(file)); } catch (e) {
    const code = (e as { code?: string }).code;
    io.err(`insmod ${file}: cannot read the file${code === 'ENOENT' ? ': no such file' : code ? `: ${code}` : ''}\n`);
    return;
  }
  try {
    m.modules.load(bytes, file, params, err => { if (err) io.err(`insmod ${file}: ${err}\n`); });
  } catch (e) {
    io.err(`insmod ${file}: ${e instanceof Error ? e.message : String(e)}\n`);
  }
}

registerRunOption({
  name: '--module', arg: '"FILE.ko [name=value]..."', repeatable: true, commands: ['run'],
  help: 'load a kernel module (a relocatable object for the image\'s architecture) after boot, with module parameters; '
    + 'modules load in the order given, each init running in an "insmod" kernel thread; a module that fails to load is reported and the run goes on',
  apply: (v, ctx: RunContext) => {
    if (!v || !v.trim()) throw new CliError('--module: expected a module file (FILE.ko [name=value]...)');
    ctx.setup.push((m, io) => insmod(m, io, v));
  },
});

registerRunOption({
  name: '--rmmod-at', arg: 'N:NAME', repeatable: true, commands: ['run'],
  help: 'after N instructions in all, rmmod NAME (its exit runs in an "rmmod" kernel thread, then its memory is freed and the probes on it become [GONE])',
  apply: (v, ctx: RunContext) => {
    const m = /^([0-9][0-9_]*):([A-Za-z0-9_-]+)$/.exec(v);
    if (!m) throw new CliError(`--rmmod-at: expected N:NAME (e.g. 500000:kprobe_example), got '${v}'`);
    const at = Number(m[1].replace(/_/g, ''));
    const name = m[2].replace(/-/g, '_');
    ctx.timed.push({
      at, text: v,
      apply: (mach, io) => {
        const err = mach.modules.unload(name, e => { if (e) io.err(`rmmod ${name}: ${e}\n`); });
        io.err(`kprobe-run: at ${mach.totalInstructions} instructions: ${err ? `rmmod ${name}: ${err}` : `rmmod ${name}`}\n`);
      },
    });
  },
});
