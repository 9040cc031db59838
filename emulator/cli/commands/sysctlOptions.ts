/**
 * `--sysctl NAME=VALUE` for `kprobe-run run` / `exec`: a kernel sysctl
 * written through the machine's sysctl table after boot and before the
 * machine runs (the subsystems register their entries at boot; known:
 * debug.kprobes_optimization = 0|1, Linux's /proc/sys/debug/kprobes-optimization).
 * An unknown name or a bad value is a one-line error.
 */
import { KPROBES_SYSCTLS, SYSCTL_KPROBES_OPTIMIZATION } from '../../kprobes';
import { CliError } from '../io';
import { registerRunOption } from './runOptions';

registerRunOption({
  name: '--sysctl', arg: 'NAME=VALUE', repeatable: true,
  help: `set a kernel sysctl before running. Known: ${KPROBES_SYSCTLS.map(n => `${n}=0|1`).join(', ')} `
    + `(${SYSCTL_KPROBES_OPTIMIZATION}: Linux's /proc/sys/debug/kprobes-optimization; 1, the default, lets the engine `
    + 'replace breakpoints by jumps, 0 keeps every probe a breakpoint)',
  apply: (v, ctx) => {
    const eq = v.indexOf('=');
    if (eq <= 0) throw new CliError(`--sysctl: expected NAME=VALUE, got '${v}'`);
    const name = v.slice(0, eq).trim();
    const value = v.slice(eq + 1);
    ctx.setup.push(m => {
      const r = m.writeSysctl(name, value);
      if (r.errno !== 0) throw new CliError(`--sysctl: ${r.reason}`);
    });
  },
});
