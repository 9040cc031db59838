/**
 * One engine registration (a kprobe, kretprobe or jprobe at one probe site)
 * and the user-facing text of a registration failure:
 *   "register_kprobe failed: -EINVAL (address is inside the kprobe blacklist)".
 * The errno comes from the engine; the reason in parentheses is worked out
 * here from the same facts the engine checks.
 */
import { errnoName, Errno } from '../kernel/abi';
import type { Jprobe, Kprobe, KprobesEngine, Kretprobe } from '../kprobes';
import { KPROBE_FLAG_DISABLED, kprobeDisabled } from '../kprobes';
import { hex } from '../memory/address';
import type { ProbeSite } from './targets';
import { whereOf } from './targets';

export type EngineProbeKind = 'kprobe' | 'kretprobe' | 'jprobe';

export const REGISTER_FUNCTION: Readonly<Record<EngineProbeKind, string>> = {
  kprobe: 'register_kprobe', kretprobe: 'register_kretprobe', jprobe: 'register_jprobe',
};

/** A site and the engine object registered for it. */
export interface SiteRegistration {
  site: ProbeSite;
  kind: EngineProbeKind;
  /** the struct kprobe (rp.kp / jp.kp for return probes and jprobes) */
  kp: Kprobe;
  rp?: Kretprobe;
  jp?: Jprobe;
  registered: boolean;
  /** 0, or the negative errno of the failed registration */
  errno: number;
  /** failure text, e.g. "register_kprobe failed: -ENOENT (unknown symbol 'nope')" */
  error?: string;
}

/** A struct kprobe for a site (symbol_name+offset or addr), registered disabled when asked. */
export function newKprobe(site: ProbeSite, disabled: boolean): Kprobe {
  const kp: Kprobe = { flags: disabled ? KPROBE_FLAG_DISABLED : 0 };
  if (site.symbol_name !== undefined) { kp.symbol_name = site.symbol_name; kp.offset = site.offset ?? 0n; } else kp.addr = site.addr;
  return kp;
}

/** Register with the engine; fills registered / errno / error. Returns the errno (0 = ok). */
export function registerSite(engine: KprobesEngine, r: SiteRegistration): number {
  // the reason is worked out before the call: a failed registration may leave fields changed
  const probe: Kprobe = { symbol_name: r.kp.symbol_name, offset: r.kp.offset, addr: r.kp.addr };
  let err: number;
  switch (r.kind) {
    case 'kprobe': err = engine.registerKprobe(r.kp); break;
    case 'kretprobe': err = engine.registerKretprobe(r.rp as Kretprobe); break;
    case 'jprobe': err = engine.registerJprobe(r.jp as Jprobe); break;
  }
  r.errno = err;
  r.registered = err === 0;
  r.error = err === 0 ? undefined : registrationError(engine, r.kind, probe, err);
  return err;
}

export function unregisterSite(engine: KprobesEngine, r: SiteRegistration): void {
  if (!r.registered) return;
  switch (r.kind) {
    case 'kprobe': engine.unregisterKprobe(r.kp); break;
    case 'kretprobe': engine.unregisterKretprobe(r.rp as Kretprobe); break;
    case 'jprobe': engine.unregisterJprobe(r.jp as Jprobe); break;
  }
  r.registered = false;
}

/** enable_kprobe / disable_kprobe (the kretprobe / jprobe variants act on their kprobe). 0 or -errno. */
export function setSiteEnabled(engine: KprobesEngine, r: SiteRegistration, on: boolean): number {
  if (!r.registered) return -Errno.EINVAL;
  return on ? engine.enableKprobe(r.kp) : engine.disableKprobe(r.kp);
}

export function siteDisabled(r: SiteRegistration): boolean {
  return kprobeDisabled(r.kp);
}

/** "register_kprobe failed: -EINVAL (reason)" */
export function registrationError(engine: KprobesEngine, kind: EngineProbeKind, probe: Kprobe, errno: number): string {
  const reason = failureReason(engine, kind, probe, errno);
  return `${REGISTER_FUNCTION[kind]} failed: -${errnoName(errno)}${reason ? ` (${reason})` : ''}`;
}

function failureReason(engine: KprobesEngine, kind: EngineProbeKind, probe: Kprobe, errno: number): string {
  const e = -errno;
  const image = engine.kernel.image;
  const addr = engine.resolveAddr({ ...probe });
  if (typeof addr === 'number') {
    if (addr === -Errno.ENOENT) return `unknown symbol '${probe.symbol_name}'`;
    return 'give either a symbol or an address';
  }
  const where = whereOf(image, addr);
  if (e === Errno.EEXIST) return `another jprobe is already registered at ${where}`;
  if (e === Errno.EILSEQ) return `${where} is not at an instruction boundary`;
  if (e !== Errno.EINVAL) return '';
  if (kind !== 'kprobe') {
    const at = image.symbols.resolve(addr);
    if (!at || at.offset !== 0n) return `a ${kind} must be placed at a function entry, not ${where}`;
  }
  if (engine.code.owns(addr)) return `${hex(addr)} is inside a kprobe instruction slot`;
  if (engine.withinKprobeBlacklist(addr)) return 'address is inside the kprobe blacklist';
  const text = image.segments.some(s => s.type === 1 && (s.flags & 1) !== 0 && addr >= s.vaddr && addr < s.vaddr + s.memsz);
  if (!text) return `${where} is not in kernel text`;
  let insn = null;
  try { insn = engine.kernel.arch.decode(engine.kernel.mem, addr); } catch { insn = null; }
  if (!insn) return `the instruction at ${where} does not decode`;
  if (engine.hooks.decodeProbeInsn(engine.ctx, addr, insn) === 'reject') {
    return `'${insn.mnemonic}' at ${where} cannot be probed`;
  }
  return `${where} cannot be probed`;
}
