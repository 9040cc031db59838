/**
 * The dynamic-events part of tracefs README, in Linux 6.1's words and
 * layout (kernel/trace/trace.c readme_msg), saying only what this parser
 * accepts: ftracetest decides which cases to run by grepping these lines
 * (`r\[maxactive\]`, `$arg<N>`, `imm-value`, `Create/append/`,
 * `place (kretprobe): .*%return`, `<type>\[<array-size>\]`, ...), so a form
 * named here must work. Left out: event probes (`e:`) and synthetic
 * events (`s:`).
 */
export function probeEventsReadme(): string {
  return [
    '  dynamic_events\t\t- Create/append/remove/show the generic dynamic events\n',
    '\t\t\t  Write into this file to define/undefine new trace events.\n',
    '  kprobe_events\t\t- Create/append/remove/show the kernel dynamic events\n',
    '\t\t\t  Write into this file to define/undefine new trace events.\n',
    '  uprobe_events\t\t- Create/append/remove/show the userspace dynamic events\n',
    '\t\t\t  Write into this file to define/undefine new trace events.\n',
    '\t  accepts: event-definitions (one definition per line)\n',
    '\t   Format: p[:[<group>/][<event>]] <place> [<args>]\n',
    '\t           r[maxactive][:[<group>/][<event>]] <place> [<args>]\n',
    '\t           -:[<group>/][<event>]\n',
    '\t    place: [<module>:]<symbol>[+<offset>]|<memaddr>\n',
    'place (kretprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>\n',
    '   place (uprobe): <path>:<offset>[%return][(ref_ctr_offset)]\n',
    '\t     args: <name>=fetcharg[:type]\n',
    '\t fetcharg: %<register>, @<address>, @<symbol>[+|-<offset>],\n',
    '\t           $stack<index>, $stack, $retval, $comm, $arg<N>,\n',
    '\t           +|-[u]<offset>(<fetcharg>), \\imm-value, \\"imm-string"\n',
    '\t     type: s8/16/32/64, u8/16/32/64, x8/16/32/64, string, symbol,\n',
    '\t           b<bit-width>@<bit-offset>/<container-size>, ustring,\n',
    '\t           symstr, <type>\\[<array-size>\\]\n',
  ].join('');
}
