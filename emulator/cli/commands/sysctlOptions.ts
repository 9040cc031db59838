/**
 * `--sysctl NAME=VALUE` for `kprobe-run run` / `exec`: a kernel sysctl set
 * before the machine runs. Known names: debug.kprobes_optimization (0|1,
 * Linux's /proc/sys/debug/kprobes-optimization). The value is kept for the
 * machine's kernel and applied to its kprobes engine (now, or when probes
 * create one). An unknown name or a bad value is a one-line error.
 */
import { writeKprobesSysctl, parseKprobesSysctl } from '../../kprobes';
import { CliError } from '../io';
import { registerRunOption } from './runOptions';

registerRunOption({
  name: '--sysctl', arg: 'NAME=VALUE',
  help: 'set a kernel sysctl before running (debug.kprobes_optimization=0|1)',
  apply: (v, ctx) => {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new CliError(`--sysctl: expected NAME=VALUE, got '${v}'`);
    const name = v.slice(0, eq).trim();
    const value = v.slice(eq + 1);
    const ok = parseKprobesSysctl(name, value);
    if (typeof ok === 'string') throw new CliError(`--sysctl: ${ok}`);
    ctx.setup.push(m => { writeKprobesSysctl(m.kernel, name, value); });
  },
});
