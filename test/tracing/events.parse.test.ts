/**
 * The tracefs dynamic-event parser (emulator/tracing/events/parse.ts): every
 * example command of Linux's Documentation/trace/kprobetrace.rst and
 * uprobetracer.rst, default event names as the kernel makes them, and bad
 * input: one error each, at its 1-based column, saying what was expected.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { errorLog, parseEventDefinition, resolveEventArch } from '../../emulator/tracing/events';
import type { EventAdd, EventCommand } from '../../emulator/tracing/events';
import { PORTS } from '../../emulator/ports';

const x86 = PORTS.find(p => p.name === 'x86_64')!;
const arm = PORTS.find(p => p.name === 'aarch64')!;
const rv = PORTS.find(p => p.name === 'riscv64')!;

function ok(text: string, arch = x86): EventCommand {
  const r = parseEventDefinition(text, { arch });
  assert.ok(r.ok, `${text}: ${r.ok ? '' : `${r.error.column}: ${r.error.message}`}`);
  return r.cmd;
}

function add(text: string, arch = x86): EventAdd {
  const c = ok(text, arch);
  assert.equal(c.op, 'add');
  return c as EventAdd;
}

/** "column: message" of a bad definition */
function bad(text: string, arch = x86): string {
  const r = parseEventDefinition(text, { arch });
  assert.ok(!r.ok, `${text} parsed`);
  return `${r.error.column}: ${r.error.message}`;
}

/** a compact view of the arguments: name=source:type */
function argsOf(d: EventAdd): string[] {
  return d.args.map(a => `${a.name}=${JSON.stringify(a.source, (k, v) => (k === 'column' ? undefined : typeof v === 'bigint' ? `${v}n` : v))}:${a.type.name}`);
}

describe('kprobetrace.rst examples', () => {
  test("p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)", () => {
    const d = add('p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)');
    assert.equal(d.type, 'p');
    assert.equal(d.subsystem, 'kprobe');
    assert.equal(d.group, 'kprobes');
    assert.equal(d.event, 'myprobe');
    assert.deepEqual(d.target, { kind: 'symbol', name: 'do_sys_open', offset: 0n });
    assert.deepEqual(d.args.map(a => [a.name, a.text, a.type.name, a.column]), [
      ['dfd', '%ax', 'x64', 23], ['filename', '%dx', 'x64', 31], ['flags', '%cx', 'x64', 44], ['mode', '+4($stack)', 'x64', 54],
    ]);
    assert.deepEqual(d.args[3].source, { k: 'deref', offset: 4n, user: false, inner: { k: 'stackp' } });
    assert.deepEqual(d.args[0].source, { k: 'reg', reg: 'ax', text: 'ax', column: 27 });
  });

  test('r:myretprobe do_sys_open $retval', () => {
    const d = add('r:myretprobe do_sys_open $retval');
    assert.equal(d.type, 'r');
    assert.equal(d.event, 'myretprobe');
    assert.equal(d.maxactive, undefined);
    assert.deepEqual(argsOf(d), ['arg1={"k":"retval"}:x64']);
  });

  test('-:myprobe', () => {
    assert.deepEqual(ok('-:myprobe'), { op: 'remove', group: undefined, event: 'myprobe', text: '-:myprobe' });
    assert.deepEqual(ok('-:kprobes/myprobe'), { op: 'remove', group: 'kprobes', event: 'myprobe', text: '-:kprobes/myprobe' });
  });

  test('the synopsis forms: MOD:SYM+offs, MEMADDR, r[MAXACTIVE], GRP/EVENT, generated names', () => {
    const m = add('p:grp/ev mymod:my_func+0x10 %di');
    assert.deepEqual([m.group, m.event, m.target], ['grp', 'ev', { kind: 'symbol', module: 'mymod', name: 'my_func', offset: 16n }]);
    assert.equal(add('p do_fork').event, 'p_do_fork_0');
    assert.equal(add('p do_fork+0x4').event, 'p_do_fork_4');
    assert.equal(add('r do_fork+0').event, 'r_do_fork_0');
    assert.equal(add('p mymod:f+8').event, 'p_mymod_f_8');
    assert.equal(add('p:grp/ do_fork').event, 'p_do_fork_0');
    assert.equal(add('p:grp/ do_fork').group, 'grp');
    const a = add('p 0xffffffff81000010');
    assert.deepEqual(a.target, { kind: 'address', addr: 0xffffffff81000010n });
    assert.equal(a.event, 'p_0xffffffff81000010');
    const r = add('r10:kprobes/ret sys_open $retval');
    assert.deepEqual([r.maxactive, r.group, r.event], [10, 'kprobes', 'ret']);
    assert.equal(add('r0 sys_open').maxactive, 0);
  });

  test('every fetch argument form and type', () => {
    const d = add('p:e do_fork a=%rdi b=@0xffffffff81000000:u32 c=@jiffies+8:s16 d=@jiffies-0x10 e=$stack3 f=$stack g=$comm '
      + 'h=$arg2:s32 i=-8(+0x10(%si)):x8 j=+0(%di):string k=+u0(%si):ustring l=\\42 m=\\"hi" n=%ip:symbol o=+u4(%dx):u16');
    assert.deepEqual(argsOf(d), [
      'a={"k":"reg","reg":"di","text":"rdi"}:x64',
      'b={"k":"mem","addr":"18446744071578845184n"}:u32',
      'c={"k":"sym","name":"jiffies","offset":"8n"}:s16',
      'd={"k":"sym","name":"jiffies","offset":"-16n"}:x64',
      'e={"k":"stack","n":3}:x64',
      'f={"k":"stackp"}:x64',
      'g={"k":"comm"}:string',
      'h={"k":"arg","n":2}:s32',
      'i={"k":"deref","offset":"-8n","user":false,"inner":{"k":"deref","offset":"16n","user":false,"inner":{"k":"reg","reg":"si","text":"si"}}}:x8',
      'j={"k":"deref","offset":"0n","user":false,"inner":{"k":"reg","reg":"di","text":"di"}}:string',
      'k={"k":"deref","offset":"0n","user":true,"inner":{"k":"reg","reg":"si","text":"si"}}:ustring',
      'l={"k":"imm","value":"42n"}:x64',
      'm={"k":"immstr","value":"hi"}:string',
      'n={"k":"reg","reg":"ip","text":"ip"}:symbol',
      'o={"k":"deref","offset":"4n","user":true,"inner":{"k":"reg","reg":"dx","text":"dx"}}:u16',
    ]);
  });

  test('registers by each port\'s names and aliases', () => {
    assert.equal((add('p f %x0 %lr %fp %sp %pc', arm).args.map(a => (a.source as { reg: string }).reg)).join(' '), 'x0 x30 x29 sp pc');
    assert.equal((add('p f %a0 %x10 %ra %fp %pc', rv).args.map(a => (a.source as { reg: string }).reg)).join(' '), 'a0 a0 ra s0 epc');
    assert.equal((add('p f %ax %rax %RAX %r8 %eflags %orig_rax').args.map(a => (a.source as { reg: string }).reg)).join(' '), 'ax ax ax r8 flags orig_ax');
  });
});

describe('uprobetracer.rst examples', () => {
  test("p /bin/bash:0x4245c0 and r /bin/bash:0x4245c0: group uprobes, the kernel's generated names", () => {
    const p = add('p /bin/bash:0x4245c0');
    assert.deepEqual([p.subsystem, p.type, p.group, p.event, p.target], ['uprobe', 'p', 'uprobes', 'p_bash_0x4245c0', { kind: 'user', path: '/bin/bash', offset: 0x4245c0n }]);
    const r = add('r /bin/bash:0x4245c0');
    assert.deepEqual([r.subsystem, r.type, r.event], ['uprobe', 'r', 'p_bash_0x4245c0']);
  });

  test('-:p_bash_0x4245c0', () => {
    assert.deepEqual(ok('-:p_bash_0x4245c0'), { op: 'remove', group: undefined, event: 'p_bash_0x4245c0', text: '-:p_bash_0x4245c0' });
  });

  test("p:zfree_entry /bin/zsh:0x46420 %ip %ax and r:zfree_exit /bin/zsh:0x46420 %ip %ax", () => {
    const e = add('p:zfree_entry /bin/zsh:0x46420 %ip %ax');
    assert.deepEqual([e.group, e.event, e.target], ['uprobes', 'zfree_entry', { kind: 'user', path: '/bin/zsh', offset: 0x46420n }]);
    assert.deepEqual(e.args.map(a => `${a.name}=${a.text}`), ['arg1=%ip', 'arg2=%ax']);
    const x = add('r:zfree_exit /bin/zsh:0x46420 %ip %ax');
    assert.deepEqual([x.type, x.event, x.args.length], ['r', 'zfree_exit', 2]);
  });

  test('the uprobe_events listing form reads back: p:uprobes/zfree_entry /bin/zsh:0x00046420 arg1=%ip arg2=%ax', () => {
    const e = add('p:uprobes/zfree_entry /bin/zsh:0x00046420 arg1=%ip arg2=%ax');
    assert.deepEqual([e.group, e.event, e.target, e.args.map(a => a.name)], ['uprobes', 'zfree_entry', { kind: 'user', path: '/bin/zsh', offset: 0x46420n }, ['arg1', 'arg2']]);
  });

  test('@+OFFSET and the u prefix (ignored: uprobe memory is user memory); PATH:symbol as an extension', () => {
    const e = add('p:u /bin/app:0x1136 v=@+0x3010:u32 w=+8(%sp)');
    assert.deepEqual(e.args.map(a => a.source.k), ['foffs', 'deref']);
    assert.equal((e.args[1].source as { user: boolean }).user, true);
    assert.deepEqual(add('p /bin/app:main+0x8').target, { kind: 'user', path: '/bin/app', symbol: 'main', symOffset: 8n });
  });
});

describe('errors: the column and what was expected', () => {
  const cases: [string, string][] = [
    ['p:e do_fork foo', "13: Invalid fetch argument 'foo': expected %REG, @ADDR, @SYM[+|-offs], $stackN, $stack, $argN, $retval, $comm, +|-[u]OFFS(FETCHARG) or \\IMM"],
    ['p:e do_fork %di:u128', "17: Unknown type 'u128': expected u8, u16, u32, u64, s8, s16, s32, s64, x8, x16, x32, x64, string, ustring or symbol"],
    ['p:e do_fork x=%foo', "15: Invalid register name '%foo' for x86_64: expected one of %r15 %r14 %r13 %r12 %bp %bx %r11 %r10 %r9 %r8 %ax %cx %dx %si %di %orig_ax %ip %cs %flags %sp %ss %fs_base %gs_base"],
    ['p5:e do_fork', '2: Maxactive is not for kprobe: only a return probe (r5) takes MAXACTIVE'],
    ['r5000:e do_fork', '2: Maxactive is too big: 5000 (at most 4096)'],
    ['r:e do_fork+4', '5: Retprobe address must be an function entry: a return probe takes SYM or SYM+0, not do_fork+4'],
    ['p:e do_fork $retval', '13: $retval is not available on probe: it is for return probes (r...)'],
    ['p:e do_fork+4 $arg1', '15: $argN is only available at function entry (offset 0), not at do_fork+4'],
    ['p:e do_fork $arg0', "13: Invalid argument number '0': expected $argN with 1 <= N <= 2048"],
    ['p:e do_fork $stackx', "13: Invalid $-variable '$stackx': expected $stack or $stackN (N a decimal number)"],
    ['p:e do_fork $foo', "13: Invalid $-variable '$foo': expected $stack, $stackN, $argN, $retval or $comm"],
    ['p:e do_fork +0(%di', "19: Dereference brace is not closed: expected ')' at the end"],
    ['p:e do_fork +0%di', '13: Dereference needs a brace: expected +0(FETCHARG)'],
    ['p:e do_fork +zz(%di)', "13: Invalid dereference offset 'zz': expected a number"],
    ['p:e do_fork +0($comm)', '16: $comm can not be dereferenced'],
    ['p:e do_fork $comm:u32', '19: $comm can only be a string, not u32'],
    ['p:e do_fork %di:string', '17: String accepts only memory argument: use +0(%di):string for the string %di points to'],
    ['p:e do_fork a=%di a=%si', "19: This argument name is already used: 'a'"],
    ['p:e do_fork 1a=%di', "13: Argument name must follow the same rules as C identifiers, not '1a'"],
    ['p:e do_fork =%di', "13: Argument name is not specified before '='"],
    ['p:e do_fork x=', "15: No argument expression after 'x='"],
    ['p:1bad do_fork', "3: Event name must follow the same rules as C identifiers, not '1bad'"],
    ['p:g.1/e do_fork', "3: Group name must follow the same rules as C identifiers, not 'g.1'"],
    ['p:', "3: Event name is not specified: expected [GRP/]EVENT after 'p:'"],
    ['p:myprobe', '10: missing the probe point: expected [MOD:]SYM[+offs] or MEMADDR (a kprobe), or PATH:OFFSET (a uprobe)'],
    ['q:e do_fork', "1: expected 'p' (probe), 'r' (return probe) or '-:' (remove) at the start of the definition, not 'q:e'"],
    ['-myprobe', "2: expected ':' after '-' (-:[GRP/]EVENT removes an event)"],
    ['p:e do_fork+zz', "5: Invalid probed address or symbol 'do_fork+zz': expected [MOD:]SYM[+offs] or MEMADDR"],
    ['p:e 0x12g4', "5: Invalid probed address or symbol '0x12g4': expected a number (MEMADDR) or [MOD:]SYM[+offs]"],
    ['p:e do_fork %di:x16[4]', '17: String accepts only memory argument: an array (x16[4]) is read from memory: use +0(%di):x16[4]'],
    ['p:e /bin/app 0x10', "13: expected ':OFFSET' after the path '/bin/app' (PATH:OFFSET)"],
    ['p:e /bin/app:zz+q', "17: Invalid probed address suffix '+q': expected a number"],
    ['p:e /bin/app:0x10 @sym', '19: Symbol is not available with uprobe: use @ADDR or @+OFFSET'],
    ['p:e do_fork @+0x10', '13: File offset is not available with kprobe: @+OFFSET is for uprobes'],
    ['r3:e /bin/app:0x10', '2: Maxactive is not for uprobe: r[MAXACTIVE] applies to kretprobes only'],
    ['p:e do_fork \\"abc', "18: String is not closed with '\"'"],
    ['p:e do_fork \\12z', "14: Invalid immediate value '12z': expected \\NUMBER or \\\"STRING\""],
  ];
  for (const [text, want] of cases) test(text, () => assert.equal(bad(text), want));

  test('a register of another architecture is an error for this one', () => {
    assert.match(bad('p:e f %di', arm), /^7: Invalid register name '%di' for aarch64: expected one of %x0 %x1/);
    assert.match(bad('p:e f %x0', x86), /^7: Invalid register name '%x0' for x86_64/);
    assert.match(bad('p:e f %rdi', rv), /^7: Invalid register name '%rdi' for riscv64/);
  });

  test('parsed without an arch, the registers and @SYM symbols are checked later (resolveEventArch)', () => {
    const r = parseEventDefinition('p:e do_fork a=%bogus b=@nosuch c=%rsi');
    assert.ok(r.ok && r.cmd.op === 'add');
    const d = r.cmd as EventAdd;
    const errs = resolveEventArch(d, x86, n => n === 'jiffies');
    assert.deepEqual(errs.map(e => `${e.column}: ${e.message.slice(0, 40)}`), [
      "15: Invalid register name '%bogus' for x86_6", '25: Invalid memory address: the image has no',
    ]);
    assert.equal((d.args[2].source as { reg: string }).reg, 'si');
  });

  test("errorLog: the kernel's error_log shape, '^' under the column", () => {
    const text = 'p:myprobe do_sys_open %foo';
    const r = parseEventDefinition(text, { arch: x86 });
    assert.ok(!r.ok);
    assert.equal(errorLog(text, r.error).split('\n').slice(1).join('\n'),
      '  Command: p:myprobe do_sys_open %foo\n'
      + '                                 ^\n');
    // Linux's own message: the ERRORS text of the error's code, without our explanation
    assert.match(errorLog(text, r.error), /^trace_kprobe: error: Invalid register name\n/);
    assert.match(errorLog(text, { column: r.error.column, message: r.error.message }), /^trace_kprobe: error: Invalid register name '%foo' for x86_64/);
    assert.match(errorLog('p:u /bin/x:0x1 %zz', { column: 16, message: 'm' }), /^trace_uprobe: error: m\n/);
  });

  test('never throws: odd input is an error', () => {
    for (const text of ['', '   ', 'p', 'r', '-', '-:', 'p:/', 'p:a/b/c f', 'p f +(', 'p f +0()', 'p f \\', 'p f @', 'p f %', 'p f $', 'p f a=b=c']) {
      const r = parseEventDefinition(text, { arch: x86 });
      assert.equal(r.ok, false, text);
    }
  });
});
