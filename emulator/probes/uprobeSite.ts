/**
 * One user probe's registration on the uprobes engine (the uprobe
 * counterpart of register.ts's SiteRegistration): its resolved target, its
 * uprobe_consumer (wrapped to count this probe's hits: handler runs, or a
 * uretprobe's returns), uprobe_register / uprobe_unregister with the error
 * text of a failure, and how the lists show it — a probe site, a
 * uprobe_events line and a uprobe_profile line.
 */
import { errnoName } from '../kernel/abi';
import { parsedImage } from '../kernel/user/process';
import type { UprobeConsumer, UprobesEngine } from '../uprobes';
import type { ProbeSiteInfo } from './manager';
import { UserTargetResolved, uprobeEventTarget } from './userProbes';

/** "/bin/app:leaf+0x0" (or the file offset) */
export function uprobeWhere(res: UserTargetResolved): string {
  return `${res.path}:${res.where ?? `0x${res.offset.toString(16)}`}`;
}

export type UprobeKind = 'uprobe' | 'uretprobe';

export class UprobeSite {
  registered = false;
  /** "uprobe_register failed: -EINVAL (...)" */
  error?: string;
  /** this probe's hits (handler runs; for uretprobes, returns) */
  hits = 0;
  /** the consumer registered (the given one, counting hits) */
  readonly uc: UprobeConsumer;

  constructor(readonly res: UserTargetResolved, readonly kind: UprobeKind, uc: UprobeConsumer,
    /** a uprobe_events line: its event */
    readonly event?: { group: string; name: string }) {
    const out: UprobeConsumer = { filter: uc.filter };
    const count = (): void => { this.hits++; };
    if (kind === 'uretprobe') {
      if (uc.handler) out.handler = uc.handler;
      const r = uc.ret_handler;
      out.ret_handler = (u, func, regs) => { count(); return r ? r(u, func, regs) : 0; };
    } else {
      const h = uc.handler;
      out.handler = (u, regs) => { count(); return h ? h(u, regs) : 0; };
    }
    this.uc = out;
  }

  /** uprobe_register; the error text, or undefined */
  register(engine: UprobesEngine): string | undefined {
    if (this.registered) return undefined;
    const r = engine.register(this.res.inode, this.res.offset, this.uc, this.res.refCtr ?? 0n);
    if (r.errno === 0) { this.registered = true; this.error = undefined; return undefined; }
    this.error = `uprobe_register failed: -${errnoName(-r.errno)}${r.reason ? ` (${r.reason})` : ''}`;
    return this.error;
  }

  unregister(engine: UprobesEngine): void {
    if (!this.registered) return;
    engine.uprobeUnregister(this.res.inode, this.res.offset, this.uc);
    this.registered = false;
  }

  /** "/bin/app:leaf+0x0" (or the file offset) */
  get where(): string { return uprobeWhere(this.res); }

  /** its event: the uprobe_events line's, or Linux's default name (p_app_0x1136) */
  private eventName(): { group: string; name: string } {
    const letter = this.kind === 'uretprobe' ? 'r' : 'p';
    return this.event ?? { group: 'uprobes', name: `${letter}_${(this.res.path.split('/').pop() ?? 'probe').replace(/[^\w]/g, '_')}_0x${this.res.offset.toString(16)}` };
  }

  /** its uprobe_events line: "p:uprobes/p_app_0x1136 /bin/app:0x0000000000001136" */
  eventLine(): string {
    const ev = this.eventName();
    const ref = this.res.refCtr ? `(0x${this.res.refCtr.toString(16)})` : '';
    return `${this.kind === 'uretprobe' ? 'r' : 'p'}:${ev.group}/${ev.name} ${uprobeEventTarget(this.res.path, this.res.offset)}${ref}`;
  }

  /** its uprobe_profile line, as Linux prints it ("  %s %-44s %15lu") */
  profileLine(): string {
    return `  ${this.res.path} ${this.eventName().name.padEnd(44)} ${String(this.hits).padStart(15)}`;
  }

  /** the probe site the lists show: the instruction's address in the program, its source line (the program's DWARF) */
  siteInfo(engine: UprobesEngine | null, enabled: boolean): ProbeSiteInfo {
    const r = this.res;
    const uprobe = this.registered ? engine?.get(r.inode, r.offset) : undefined;
    let source: { file: string; line: number } | undefined;
    if (r.vaddr !== undefined) {
      try {
        const l = parsedImage(r.inode, r.path).lines?.lineForAddress(r.vaddr);
        if (l) source = { file: l.file, line: l.line };
      } catch { /* not an ELF any more */ }
    }
    return {
      addr: r.vaddr, where: this.where, source, registered: this.registered, error: this.error, hits: this.hits,
      nmissed: uprobe?.nmissed ?? 0, flags: enabled ? '' : '[DISABLED]',
    };
  }
}
