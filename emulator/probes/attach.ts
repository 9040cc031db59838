/**
 * The probe manager of a machine, composed above it: the machine boots the
 * engines (kprobes, uprobes, debug registers); the probe layer builds one
 * ProbeManager on top of them and attaches it to the machine, where the
 * kernel's tracefs (kprobe_events, uprobe_events) defines its probes
 * through it and time travel captures it with the rest of the machine.
 */
import type { Machine } from '../machine';
import { ProbeManager } from './manager';

/**
 * The machine's probe manager, made and attached at the first call (with
 * the machine's MachineOptions.probes); a clear error on a machine with
 * neither a kprobes nor a uprobes engine.
 */
export function probesOf(m: Machine): ProbeManager {
  const have = m.attachedProbes;
  if (have instanceof ProbeManager) return have;
  if (have) throw new Error('this machine has a probe layer that is not a ProbeManager');
  if (!m.hasKprobes && !m.hasUprobes) m.kprobes; // the clear error: neither engine here
  const mgr = new ProbeManager(m.kernel, m.hasKprobes ? m.kprobes : null, { ...m.probeOptions, chargeSteps: (c, n) => m.charge(c, n) },
    m.hasUprobes ? m.uprobes : null, m.isKernelMachine ? { hwbp: m.hwbp, kwatch: () => m.kwatch } : undefined);
  m.attachProbes(mgr);
  return mgr;
}

/**
 * Compose the probe layer on a freshly booted machine, as a front end does
 * before it runs it (so that kprobe_events / uprobe_events written by the
 * guest find the manager): the manager, or null on a machine with neither a
 * kprobes nor a uprobes engine (tracefs then refuses event definitions).
 */
export function attachProbes(m: Machine): ProbeManager | null {
  return m.hasKprobes || m.hasUprobes ? probesOf(m) : null;
}
