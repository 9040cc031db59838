/**
 * Probe policy options of `kprobe-run run` (ProbeManagerOptions):
 *
 *   --handler-faults oops|report  a fault in a probe handler that its `fault`
 *                                 snippet does not handle: oops the CPU as
 *                                 Linux does (default), or report it and go on.
 *   --insn-boundary warn|reject   a kprobe address inside an instruction:
 *                                 registered with a warning, as Linux 2.6 on
 *                                 CISC (default), or -EILSEQ as today's kernels.
 */
import { DEFAULT_HANDLER_FAULTS, DEFAULT_INSN_BOUNDARY, HANDLER_FAULT_POLICIES, INSN_BOUNDARY_POLICIES } from '../../probes';
import { CliError } from '../io';
import { RunContext, registerRunOption } from './runOptions';

function choice<T extends string>(option: string, value: string, allowed: readonly T[]): T {
  const hit = allowed.find(a => a === value);
  if (hit === undefined) throw new CliError(`${option}: expected ${allowed.join(' or ')}, got '${value}'`);
  return hit;
}

function probeOptions(ctx: RunContext): NonNullable<RunContext['machine']['probes']> {
  return ctx.machine.probes ??= {};
}

registerRunOption({
  name: '--handler-faults', arg: HANDLER_FAULT_POLICIES.join('|'), commands: ['run', 'exec'],
  help: `a fault in a probe handler that its fault snippet does not handle: 'oops' the CPU as Linux does (default ${DEFAULT_HANDLER_FAULTS}), `
    + 'or \'report\' it on stderr and let the probe go on',
  apply: (v, ctx) => { probeOptions(ctx).handlerFaults = choice('--handler-faults', v, HANDLER_FAULT_POLICIES); },
});
registerRunOption({
  name: '--insn-boundary', arg: INSN_BOUNDARY_POLICIES.join('|'), commands: ['run'],
  help: `a kprobe address inside an instruction: 'warn' and register it as Linux 2.6 does on x86 (default ${DEFAULT_INSN_BOUNDARY}), `
    + 'or \'reject\' it with -EILSEQ as today\'s kernels do',
  apply: (v, ctx) => { probeOptions(ctx).insnBoundary = choice('--insn-boundary', v, INSN_BOUNDARY_POLICIES); },
});
