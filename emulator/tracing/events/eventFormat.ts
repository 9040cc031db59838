/**
 * tracefs `events/GRP/EVENT/format` of a dynamic event (kernel/trace/
 * trace_events.c f_show with trace_probe.c's fields): the event's name and
 * id, the common fields every trace entry begins with, the probe's own
 * fields (kprobe/uprobe: `__probe_ip`; return probes: `__probe_func` and
 * `__probe_ret_ip`), one field per fetch argument packed after them, and
 * the print format the trace line follows:
 *
 *   name: myprobe
 *   ID: 2000
 *   format:
 *   	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
 *   	...
 *   	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;
 *   	field:u64 dfd;	offset:16;	size:8;	signed:0;
 *
 *   print fmt: "(%lx) dfd=0x%Lx", REC->__probe_ip, REC->dfd
 *
 * Argument field types by the fetch type's name as Linux's fmttype gives
 * them (u32, s64, x16, symbol printed with %pS), a string as `__data_loc
 * char[]` (4 bytes: where the string lies in the entry); an array TYPE[N]
 * as one field of N elements printed `{fmt,fmt,...}`.
 */
import type { EventAdd, FetchType } from './types';

/** the common fields every event's format starts with (trace_entry), COMMON_SIZE bytes */
export const COMMON_FIELDS: readonly string[] = [
  '\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;',
  '\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;',
  '\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;',
  '\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;',
];
export const COMMON_SIZE = 8;

/** The field type, size and printf conversion of a fetch type. */
export function fieldOf(t: FetchType): { type: string; size: number; signed: boolean; fmt: string; value: (name: string) => string } {
  if (t.kind === 'string') return { type: '__data_loc char[]', size: 4, signed: false, fmt: '\\"%s\\"', value: n => `__get_str(${n})` };
  if (t.kind === 'symbol') return { type: 'symbol', size: t.size, signed: false, fmt: '%pS', value: n => `REC->${n}` };
  const long = t.size === 8 ? 'L' : '';
  const fmt = t.hex ? `0x%${long}x` : t.signed ? `%${long}d` : `%${long}u`;
  return { type: t.name, size: t.size, signed: t.signed && !t.hex, fmt, value: n => `REC->${n}` };
}

/** The `format` file of an event with this definition and id. */
export function eventFormat(def: EventAdd, id: number): string {
  const lines = [`name: ${def.event}`, `ID: ${id}`, 'format:', ...COMMON_FIELDS, ''];
  let offset = COMMON_SIZE;
  const field = (type: string, name: string, size: number, signed: boolean): void => {
    lines.push(`\tfield:${type} ${name};\toffset:${offset};\tsize:${size};\tsigned:${signed ? 1 : 0};`);
    offset += size;
  };
  const ret = def.type === 'r';
  const user = def.subsystem === 'uprobe';
  let head: string, headArgs: string;
  if (ret) {
    field('unsigned long', '__probe_func', 8, false);
    field('unsigned long', '__probe_ret_ip', 8, false);
    head = user ? '(0x%lx <- 0x%lx)' : '(%lx <- %lx)';
    headArgs = 'REC->__probe_func, REC->__probe_ret_ip';
  } else {
    field('unsigned long', '__probe_ip', 8, false);
    head = user ? '(0x%lx)' : '(%lx)';
    headArgs = 'REC->__probe_ip';
  }
  const fmts: string[] = [], values: string[] = [];
  for (const a of def.args) {
    const f = fieldOf(a.type);
    if (a.count !== undefined) {
      // TYPE[N]: one field of N elements, printed as {v0,v1,...} (traceprobe_parse_probe_arg_body's "%s[%d]")
      field(`${f.type}[${a.count}]`, a.name, f.size * a.count, f.signed);
      fmts.push(` ${a.name}={${Array.from({ length: a.count }, () => f.fmt).join(',')}}`);
      for (let j = 0; j < a.count; j++) values.push(f.value(`${a.name}[${j}]`));
      continue;
    }
    field(f.type, a.name, f.size, f.signed);
    fmts.push(` ${a.name}=${f.fmt}`);
    values.push(f.value(a.name));
  }
  lines.push('', `print fmt: "${head}${fmts.join('')}", ${[headArgs, ...values].join(', ')}`, '');
  return lines.join('\n');
}
