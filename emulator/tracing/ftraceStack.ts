/**
 * The stack tracer (kernel/trace/trace_stack.c), an ftrace user beside the
 * function tracer: while the sysctl kernel.stack_tracer_enabled
 * (/proc/sys/kernel/stack_tracer_enabled) is 1, every call of a function in
 * stack_trace_filter (all traceable functions when it is empty) measures
 * how much of the task's kernel stack is in use at its entry; a new maximum
 * is kept with the stack at that moment.
 *
 *   stack_max_size      the largest use seen, in bytes ("%ld\n"); writing a
 *                       number sets it (0 restarts the search)
 *   stack_trace         the stack of that maximum, as trace_stack.c's t_show
 *                       prints it: a header with the number of entries, then
 *                       per entry its depth (bytes from the stack's top to
 *                       its frame), its frame's size and its %pS location
 *   stack_trace_filter  set_ftrace_filter's syntax (functionTracer.ts)
 *
 * The entries are the traced function, then each word between the entry
 * sp and the stack's top that points into a kernel function (a return
 * address, as the stack tracer finds each of its unwinder's entries on the
 * stack to give it a depth).
 */
import type { Kernel } from '../kernel/kernel';
import type { SysctlEntry } from '../kernel/sysctl';
import { toVAddr } from '../memory/address';

/** sysctl kernel.stack_tracer_enabled */
export const SYSCTL_STACK_TRACER = 'kernel.stack_tracer_enabled';
/** STACK_TRACE_ENTRIES */
const MAX_ENTRIES = 500;

interface StackEntry { ip: bigint; depth: number }

export class StackTracer {
  enabled = false;
  maxSize = 0;
  private entries: StackEntry[] = [];

  constructor(private readonly k: Kernel, private readonly changed: () => void) {}

  /** the sysctl that turns it on and off */
  sysctl(): SysctlEntry {
    return {
      name: SYSCTL_STACK_TRACER,
      procPath: '/proc/sys/kernel/stack_tracer_enabled',
      values: '0|1',
      read: () => (this.enabled ? '1\n' : '0\n'),
      parse: text => {
        const v = text.trim();
        if (!/^-?\d+$/.test(v)) return { ok: false, reason: `expected a number, got '${text}'` };
        return { ok: true, apply: () => { this.enabled = v !== '0' && !/^-?0+$/.test(v); this.changed(); } };
      },
    };
  }

  /** check_stack: the task on `cpu` entered the function at `ip` with `sp` */
  hit(cpu: number, ip: bigint, sp: bigint): void {
    const task = this.k.currentTask(cpu);
    if (!task || sp < task.stackBase || sp >= task.stackTop) return;
    const top = task.stackTop;
    const size = Number(top - sp);
    if (size <= this.maxSize) return;
    this.maxSize = size;
    const mem = this.k.cpus[cpu].mem;
    const syms = this.k.image.symbols;
    const entries: StackEntry[] = [{ ip, depth: size }];
    for (let a = sp; a + 8n <= top && entries.length < MAX_ENTRIES; a += 8n) {
      const v = toVAddr(a);
      if (v === null || !mem.isMapped(v, 8)) break;
      const w = mem.read64(v);
      const fn = syms.resolve(w);
      // a return address: inside a function, past its first instruction
      if (fn && fn.sym.type === 'func' && fn.offset > 0n) entries.push({ ip: w, depth: Number(top - a) });
    }
    this.entries = entries;
  }

  /** stack_max_size */
  showMax(): string { return `${this.maxSize}\n`; }

  setMax(text: string): number {
    const m = /^\s*(\d+)\n?$/.exec(text);
    if (!m) return -22;
    this.maxSize = Number(m[1]);
    return 0;
  }

  /** stack_trace: t_show's header and lines */
  showTrace(): string {
    const e = this.entries;
    const sym = (a: bigint): string => {
      const r = this.k.image.symbols.resolve(a);
      return r ? `${r.sym.name}+0x${r.offset.toString(16)}/0x${r.sym.size.toString(16)}` : `0x${a.toString(16)}`;
    };
    let out = `        Depth    Size   Location    (${e.length} entries)\n        -----    ----   --------\n`;
    e.forEach((x, i) => {
      const size = i + 1 === e.length ? x.depth : x.depth - e[i + 1].depth;
      out += `${String(i).padStart(3)}) ${String(x.depth).padStart(8)}   ${String(size).padStart(5)}   ${sym(x.ip)}\n`;
    });
    return out;
  }
}
