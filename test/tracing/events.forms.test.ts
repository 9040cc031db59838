/**
 * The dynamic-event forms Linux 6.1 accepts beyond the basic ones, parsed
 * and evaluated: the %return suffix, uprobe reference counters, arrays
 * TYPE[N], bitfields b<width>@<offset>/<container>, GRP.EVENT, the limits
 * (MAX_ARGSTR_LEN, MAX_PROBE_EVENT_SIZE), user-memory fetches that fault on
 * kernel addresses, several probes on one event (appendError) and
 * `-:EVENT PROBEPOINT [ARGS]` (removeMatches). Linux's code is the reference
 * (kernel/trace/trace_probe.c, trace_kprobe.c, trace_uprobe.c of 6.1).
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  appendError, fetchArgsText, linuxErrorMessage, parseEventDefinition, probeEventsReadme, removeMatches, MAX_ARGSTR_LEN,
} from '../../emulator/tracing/events';
import type { EventAdd, EventCommand, EventError, FetchEnv } from '../../emulator/tracing/events';
import { PORTS } from '../../emulator/ports';

const x86 = PORTS.find(p => p.name === 'x86_64')!;

function parse(text: string): EventCommand {
  const r = parseEventDefinition(text, { arch: x86 });
  assert.ok(r.ok, `${text}: ${r.ok ? '' : `${r.error.column}: ${r.error.message}`}`);
  return r.cmd;
}

function add(text: string): EventAdd {
  const c = parse(text);
  assert.equal(c.op, 'add');
  return c as EventAdd;
}

/** "column CODE" of a bad definition */
function bad(text: string): string {
  const r = parseEventDefinition(text, { arch: x86 });
  assert.ok(!r.ok, `${text} parsed`);
  return `${r.error.column} ${r.error.code ?? '-'}`;
}

/** little-endian memory and registers: what a hit offers (a read outside `mem` faults) */
function envOf(regs: Record<string, bigint>, mem: Map<bigint, number>): FetchEnv {
  const byte = (a: bigint): number => {
    const b = mem.get(a);
    if (b === undefined) throw new Error(`fault at 0x${a.toString(16)}`);
    return b;
  };
  return {
    reg: n => regs[n] ?? 0n,
    sp: () => regs.sp ?? 0n,
    retval: () => regs.ax ?? 0n,
    arg: () => 0n,
    comm: () => 'sh',
    read: (addr, size) => {
      let v = 0n;
      for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(byte(addr + BigInt(i)));
      return v;
    },
    readString: (addr, max) => {
      let s = '';
      for (let i = 0; i < max; i++) {
        const b = byte(addr + BigInt(i));
        if (!b) break;
        s += String.fromCharCode(b);
      }
      return s;
    },
    symbol: () => undefined,
    symbolize: a => `0x${a.toString(16)}`,
  };
}

function poke(mem: Map<bigint, number>, at: bigint, bytes: number[] | string): void {
  const b = typeof bytes === 'string' ? [...bytes].map(c => c.charCodeAt(0)).concat(0) : bytes;
  b.forEach((v, i) => mem.set(at + BigInt(i), v));
}

function le64(v: bigint): number[] {
  return Array.from({ length: 8 }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));
}

describe('the %return suffix', () => {
  test('p SYM%return is a return probe, named r_SYM_0 as Linux names it', () => {
    const d = add('p:kprobes/e do_fork%return $retval');
    assert.deepEqual([d.type, d.event, d.targetText], ['r', 'e', 'do_fork%return']);
    assert.equal(add('p do_fork%return').event, 'r_do_fork_0');
  });
  test('only %return, and only at a function entry', () => {
    assert.equal(bad('p do_fork%ret'), '10 BAD_ADDR_SUFFIX');
    assert.equal(bad('p do_fork+4%return'), '3 BAD_RETPROBE');
    assert.equal(bad('p do_fork%return $arg1'), '18 BAD_VAR');
  });
  test('uprobes: PATH:OFFSET%return and the reference counter PATH:OFFSET(REF_CTR_OFFSET)', () => {
    const u = add('p:u /bin/app:0x10%return(0x20)');
    assert.equal(u.type, 'r');
    assert.deepEqual(u.target, { kind: 'user', path: '/bin/app', offset: 0x10n, refCtr: 0x20n });
    assert.deepEqual(add('p /bin/app:0x10(8)').target, { kind: 'user', path: '/bin/app', offset: 0x10n, refCtr: 8n });
    assert.equal(bad('p /bin/app:0x10(8'), '18 REFCNT_OPEN_BRACE');
    assert.equal(bad('p /bin/app:0x10(z)'), '17 BAD_REFCNT');
  });
});

describe('names', () => {
  test('GRP.EVENT names the group as GRP/EVENT does; a group may hold -', () => {
    const d = add('p:grp.ev do_fork');
    assert.deepEqual([d.group, d.event], ['grp', 'ev']);
    assert.equal(add('p:my-grp/ev do_fork').group, 'my-grp');
  });
  test('group and event names are at most 63 characters', () => {
    assert.equal(add(`p:${'g'.repeat(63)}/${'e'.repeat(63)} do_fork`).event.length, 63);
    assert.equal(bad(`p:${'g'.repeat(64)}/e do_fork`), '3 GROUP_TOO_LONG');
    assert.equal(bad(`p:${'e'.repeat(64)} do_fork`), '3 EVENT_TOO_LONG');
  });
  test('a symbol the kernel has twice is NON_UNIQ_SYMBOL, one it lacks BAD_PROBE_ADDR (when the parser can look them up)', () => {
    const count = (n: string) => ({ dup: 2, one: 1 } as Record<string, number>)[n] ?? 0;
    const err = (t: string) => {
      const r = parseEventDefinition(t, { symbolCount: count });
      return r.ok ? 'ok' : `${r.error.column} ${r.error.code}`;
    };
    assert.equal(err('p:e dup'), '5 NON_UNIQ_SYMBOL');
    assert.equal(err('p:e none'), '5 BAD_PROBE_ADDR');
    assert.equal(err('p:e one'), 'ok');
    assert.equal(err('p:e mod:dup'), 'ok');
  });
});

describe('limits', () => {
  test(`an argument expression is at most ${MAX_ARGSTR_LEN} characters (MAX_ARGSTR_LEN), NAME= not counted`, () => {
    const body = (n: number) => `\\"${'a'.repeat(n - 3)}"`;
    assert.equal(body(MAX_ARGSTR_LEN).length, MAX_ARGSTR_LEN);
    assert.equal(add(`p:e do_fork averylongargumentname=${body(MAX_ARGSTR_LEN)}`).args.length, 1);
    assert.equal(bad(`p:e do_fork x=${body(MAX_ARGSTR_LEN + 1)}`), '15 ARG_TOO_LONG');
  });
  test("an event's fields take at most 3072 bytes (MAX_PROBE_EVENT_SIZE)", () => {
    const six = Array.from({ length: 6 }, (_, i) => `a${i}=+0(%di):u64[64]`).join(' ');
    assert.equal(add(`p:e do_fork ${six}`).args.length, 6);
    assert.equal(bad(`p:e do_fork ${six} b=+0(%di):u64[64]`), `${`p:e do_fork ${six} b=`.length + 1} EVENT_TOO_BIG`);
  });
  test('an argument is at most 15 fetch steps (FETCH_INSN_MAX)', () => {
    // %di takes no step, each +0() one: 14 levels fit; at 15 the outermost level's step is one too many, reported at its inner argument
    const nest = (n: number) => `${'+0('.repeat(n)}%di${')'.repeat(n)}`;
    assert.equal(add(`p:e do_fork ${nest(14)}`).args.length, 1);
    assert.equal(bad(`p:e do_fork ${nest(15)}`), `${'p:e do_fork +0('.length + 1} TOO_MANY_OPS`);
  });
});

describe('arrays and bitfields: parsed and fetched', () => {
  const mem = new Map<bigint, number>();
  const ARR = 0x1000n;
  poke(mem, ARR, [1, 2, 3, 4, 0xcd, 0xab, 0, 0]);
  const STRS = 0x2000n;
  poke(mem, STRS, [...le64(0x3000n), ...le64(0x3010n)]);
  poke(mem, 0x3000n, 'ab');
  poke(mem, 0x3010n, 'cd');
  const env = envOf({ di: ARR, si: STRS }, mem);

  test('u8[4] reads four bytes; x16[2] two halves; string[2] two pointers to strings', () => {
    const d = add('p:e f a=+0(%di):u8[4] b=+4(%di):x16[1] c=+0(%si):string[2]');
    assert.deepEqual(d.args.map(a => [a.type.name, a.count]), [['u8', 4], ['x16', 1], ['string', 2]]);
    assert.equal(fetchArgsText(d.args, env), ' a={1,2,3,4} b={0xabcd} c={"ab","cd"}');
  });
  test('b4@4/16 is bits 4..7 of a u16; a bitfield of a register works on its low bits', () => {
    const d = add('p:e f a=+4(%di):b4@4/16 b=%di:b8@4/32');
    assert.deepEqual(d.args.map(a => [a.type.name, a.type.bitfield]), [['u16', { width: 4, offset: 4 }], ['u32', { width: 8, offset: 4 }]]);
    assert.equal(fetchArgsText(d.args, env), ` a=12 b=${Number((ARR >> 4n) & 0xffn)}`);
  });
  test("Linux's array and bitfield errors", () => {
    assert.equal(bad('p:e f +0(%di):u8[65]'), '18 ARRAY_TOO_BIG');
    assert.equal(bad('p:e f +0(%di):u8[0]'), '18 BAD_ARRAY_NUM');
    assert.equal(bad('p:e f %di:u8[2]'), '11 BAD_STRING');
    assert.equal(bad('p:e f +0(%di):b0@4/16'), '15 BAD_BITFIELD');
    assert.equal(bad('p:e f +0(%di):b9@8/16'), '15 BAD_BITFIELD');
    assert.equal(bad('p:e f +0(%di):b4@4/12'), '15 BAD_TYPE');
  });
});

test('symstr: the value as its symbol, in quotes; only for values and kernel loads', () => {
  const mem = new Map<bigint, number>();
  poke(mem, 0x1000n, le64(0xffffffff81000040n));
  const env = { ...envOf({ di: 0xffffffff81000010n, si: 0x1000n }, mem), symbolize: (a: bigint) => `fn+0x${(a - 0xffffffff81000000n).toString(16)}/0x80` };
  const d = add('p:e f a=%di:symstr b=+0(%si):symstr');
  assert.equal(fetchArgsText(d.args, env), ' a="fn+0x10/0x80" b="fn+0x40/0x80"');
  assert.equal(bad('p:e f $stack:symstr'), '14 BAD_SYMSTRING');
  assert.equal(bad('p:e f \\1:symstr'), '10 BAD_SYMSTRING');
  assert.equal(bad('p:e f +0(%di):symstr[2]'), '15 BAD_STRING');
});

describe('user memory: +u...() and ustring fault on a kernel address, as access_ok makes them', () => {
  const mem = new Map<bigint, number>();
  const KADDR = 0xffffffff81000000n;
  const UADDR = 0x7ff000n;
  poke(mem, KADDR, 'kernel');
  poke(mem, UADDR, 'user');
  test('a kernel probe reading user memory', () => {
    const d = add('p:e f a=+u0(%di):u8 b=+0(%di):ustring c=+0(%di):string');
    assert.equal(fetchArgsText(d.args, envOf({ di: KADDR }, mem)), ' a=(fault) b=(fault) c="kernel"');
    assert.equal(fetchArgsText(d.args, envOf({ di: UADDR }, mem)), ` a=${'u'.charCodeAt(0)} b="user" c="user"`);
  });
  test('a uprobe dereferences user memory only', () => {
    const d = add('p:u /bin/app:0x10 a=+0(%di):u8 b=+0(%di):string');
    assert.equal(fetchArgsText(d.args, envOf({ di: KADDR }, mem)), ' a=(fault) b=(fault)');
  });
});

describe('several probes on one event', () => {
  const ev = (t: string) => add(t);
  const code = (e: EventError | undefined) => (e ? `${e.column} ${e.code}: ${linuxErrorMessage(e)}` : 'appends');
  const existing = [ev('p:kprobes/testevent kernel_clone abcd=\\1')];
  test("a definition naming an event appends when the type and the arguments' names and types agree", () => {
    assert.equal(code(appendError(ev('p:kprobes/testevent do_exit abcd=\\2'), existing)), 'appends');
    assert.equal(code(appendError(ev('p:kprobes/other do_exit'), existing)), 'appends');
  });
  test("Linux's errors otherwise", () => {
    assert.equal(code(appendError(ev('r:kprobes/testevent do_exit'), existing)), '1 DIFF_PROBE_TYPE: Probe type is different from existing probe');
    assert.equal(code(appendError(ev('p:kprobes/testevent do_exit abcd=\\1:u8'), existing)), '29 DIFF_ARG_TYPE: Argument type or name is different from existing probe');
    assert.equal(code(appendError(ev('p:kprobes/testevent do_exit'), existing)), '29 DIFF_ARG_TYPE: Argument type or name is different from existing probe');
    assert.equal(code(appendError(ev('p:kprobes/testevent kernel_clone abcd=\\1'), existing)), '1 SAME_PROBE: There is already the exact same probe event');
    assert.equal(code(appendError(ev('p:kprobes/testevent /bin/app:0x10'), existing)), '1 EVENT_EXIST: Given group/event name is already used by another event');
  });
  test('-:EVENT PROBEPOINT [ARGS] removes the probes at that point whose arguments begin so', () => {
    const rm = parse('-:kprobes/testevent kernel_clone abcd=\\1');
    assert.deepEqual(rm, { op: 'remove', group: 'kprobes', event: 'testevent', match: ['kernel_clone', 'abcd=\\1'], text: '-:kprobes/testevent kernel_clone abcd=\\1' });
    assert.equal(rm.op === 'remove' && removeMatches(rm, existing[0]), true);
    assert.equal(rm.op === 'remove' && removeMatches(rm, ev('p:kprobes/testevent do_exit abcd=\\1')), false);
    const byName = parse('-:testevent');
    assert.equal(byName.op === 'remove' && removeMatches(byName, ev('p:kprobes/testevent do_exit abcd=\\1')), true);
    const group = parse('-:kprobes/');
    assert.equal(group.op === 'remove' && removeMatches(group, ev('p:kprobes/any do_exit')), true);
    const uprobe = parse('-:uprobes/u /bin/app:0x0000000000000010');
    assert.equal(uprobe.op === 'remove' && removeMatches(uprobe, ev('p:uprobes/u /bin/app:0x10 a=%di')), true);
  });
});

test("README's dynamic-events lines name the forms ftracetest looks for", () => {
  const r = probeEventsReadme();
  for (const want of ['r[maxactive]', '$arg<N>', 'imm-value', 'imm-string', 'Create/append/', '<type>\\[<array-size>\\]', 'b<bit-width>@<bit-offset>/<container-size>']) {
    assert.ok(r.includes(want), want);
  }
  assert.match(r, /place \(kretprobe\): .*%return/);
  assert.match(r, /place \(uprobe\): .*%return.*ref_ctr_offset/);
});
