/**
 * One engine registration (a kprobe, kretprobe or jprobe at one probe site)
 * and the user-facing text of a registration failure:
 *   "register_kprobe failed: -EINVAL (address is inside the kprobe blacklist)".
 * The errno and the reason in parentheses both come from the engine
 * (registerKprobeResult & co.: the check that refused it says why).
 */
import { errnoName, Errno } from '../kernel/abi';
import type { Jprobe, Kprobe, KprobeRegError, KprobeRegResult, KprobesEngine, Kretprobe } from '../kprobes';
import { errnoOf, KPROBE_FLAG_DISABLED, kprobeDisabled } from '../kprobes';
import type { ProbeSite } from './targets';
import type { InsnBoundaryPolicy } from './insnBoundary';
import { splitInstruction } from '../arch/insnBoundary';
import type { SplitInstruction } from '../arch/insnBoundary';

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
  /** a kprobe address inside an instruction: 'warn' (default, Linux 2.6 on CISC) or 'reject' (-EILSEQ, today's kernels) */
  insnBoundary?: InsnBoundaryPolicy;
  /** registered, but worth a warning: 'do_fork+0x3 is inside "mov rbp, rsp" (do_fork+0x1..+0x4): ...' */
  warning?: string;
}

/**
 * A struct kprobe for a site (symbol_name+offset or addr), registered
 * disabled when asked. Every field the caller and the engine set later is
 * there from the start (undefined until then): the object keeps one shape
 * with its fields in itself, where fields added one by one would go to a
 * property array of their own, reallocated as it grows (per probe of a file
 * of thousands).
 */
export function newKprobe(site: ProbeSite, disabled: boolean): Kprobe {
  const sym = site.symbol_name;
  return {
    addr: sym === undefined || site.addr !== undefined ? site.addr : undefined,
    symbol_name: sym, offset: sym !== undefined ? site.offset ?? 0n : undefined,
    pre_handler: undefined, post_handler: undefined, fault_handler: undefined,
    flags: disabled ? KPROBE_FLAG_DISABLED : 0, nmissed: undefined, hits: undefined, id: undefined, opcode: undefined, ainsn: undefined,
  };
}

/** A site's registration, not yet registered (every field in the object from the start, as newKprobe's). */
export function newSiteRegistration(site: ProbeSite, kind: EngineProbeKind, kp: Kprobe): SiteRegistration {
  return { site, kind, kp, rp: undefined, jp: undefined, registered: false, errno: 0, error: undefined, insnBoundary: undefined, warning: undefined };
}

/** Register with the engine; fills registered / errno / error (the engine's reason). Returns the errno (0 = ok). */
export function registerSite(engine: KprobesEngine, r: SiteRegistration): number {
  const split = r.kind === 'kprobe' ? splitSite(engine, r.site) : undefined;
  r.warning = undefined;
  if (split && r.insnBoundary === 'reject') {
    r.errno = -Errno.EILSEQ;
    r.registered = false;
    r.error = `${REGISTER_FUNCTION[r.kind]} failed: -EILSEQ (${split.message})`;
    return r.errno;
  }
  let res: KprobeRegResult;
  switch (r.kind) {
    case 'kprobe': res = engine.registerKprobeResult(r.kp); break;
    case 'kretprobe': res = engine.registerKretprobeResult(r.rp as Kretprobe); break;
    case 'jprobe': res = engine.registerJprobeResult(r.jp as Jprobe); break;
  }
  r.errno = errnoOf(res);
  r.registered = res === 0;
  r.error = res === 0 ? undefined : registrationError(r.kind, res);
  if (res === 0 && split) r.warning = `${split.message}: registered as on Linux 2.6 (no instruction-boundary check on CISC): its breakpoint byte changes that instruction`;
  return r.errno;
}

/** The instruction a kprobe site splits, decoded from its function's start in the image. */
function splitSite(engine: KprobesEngine, site: ProbeSite): SplitInstruction | undefined {
  const addr = site.resolved ?? site.addr;
  if (addr === undefined) return undefined;
  return splitInstruction(engine.kernel.image, engine.kernel.arch, addr);
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
export function registrationError(kind: EngineProbeKind, e: KprobeRegError): string {
  return `${REGISTER_FUNCTION[kind]} failed: -${errnoName(e.errno)}${e.reason ? ` (${e.reason})` : ''}`;
}
