/**
 * The dynamic-events part of tracefs README, in Linux 6.1's words and
 * layout (kernel/trace/trace.c readme_msg), saying only what this parser
 * accepts: ftracetest decides which cases to run by grepping these lines
 * (`r\[maxactive\]`, `$arg<N>`, `imm-value`, `Create/append/`,
 * `place (kretprobe): .*%return`, `<type>\[<array-size>\]`, ...), so a form
 * named here must work: synthetic events (`s:`, tracing/dynevent/synth.ts)
 * and event probes (`e:`, tracing/dynevent/eprobe.ts) too.
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
    '\t           s:[synthetic/]<event> <field> [<field>]\n',
    '\t           e[:[<group>/][<event>]] <attached-group>.<attached-event> [<args>] [if <filter>]\n',
    '\t           -:[<group>/][<event>]\n',
    '\t    place: [<module>:]<symbol>[+<offset>]|<memaddr>\n',
    'place (kretprobe): [<module>:]<symbol>[+<offset>]%return|<memaddr>\n',
    '   place (uprobe): <path>:<offset>[%return][(ref_ctr_offset)]\n',
    '\t     args: <name>=fetcharg[:type]\n',
    '\t fetcharg: (%<register>|$<efield>), @<address>, @<symbol>[+|-<offset>],\n',
    '\t           $stack<index>, $stack, $retval, $comm, $arg<N>,\n',
    '\t           +|-[u]<offset>(<fetcharg>), \\imm-value, \\"imm-string"\n',
    '\t     type: s8/16/32/64, u8/16/32/64, x8/16/32/64, string, symbol,\n',
    '\t           b<bit-width>@<bit-offset>/<container-size>, ustring,\n',
    '\t           symstr, <type>\\[<array-size>\\]\n',
    '\t    field: <stype> <name>;\n',
    '\t    stype: u8/u16/u32/u64, s8/s16/s32/s64, pid_t,\n',
    '\t           [unsigned] char/int/long\n',
    "\t    efield: For event probes ('e' types), the field is on of the fields\n",
    '\t            of the <attached-group>/<attached-event>.\n',
    '  events/synthetic_events\t- Create/append/remove/show synthetic events\n',
    '\t  Write into this file to define/undefine new synthetic events.\n',
    "\t     example: echo 'myevent u64 lat; char name[]' >> synthetic_events\n",
  ].join('');
}
