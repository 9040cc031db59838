/**
 * Trace lines and values as the kernel's trace file prints them
 * (trace_output.c trace_print_context, trace_kprobe.c print_*_event,
 * trace_probe.c print_type_*), the fetch-argument evaluator over a fake
 * hit (registers, memory with holes, strings), kprobe_profile and
 * kprobe_events lines — exact strings.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FetchEnv, eventDefinitionLine, fetchArgsText, formatProfileLine, formatValue, fetchType, kprobeLocation, kretprobeLocation,
  parseEventDefinition, traceContextText, traceLine, uprobeLocation,
} from '../../emulator/tracing/events';
import type { EventAdd } from '../../emulator/tracing/events';
import { PORTS } from '../../emulator/ports';

const x86 = PORTS.find(p => p.name === 'x86_64')!;

function def(text: string): EventAdd {
  const r = parseEventDefinition(text, { arch: x86 });
  assert.ok(r.ok && r.cmd.op === 'add', text);
  return r.cmd as EventAdd;
}

describe('trace line format', () => {
  test('context: "%16s-%-7d [%03d] FLAGS %5lu.%06lu: " with ns rounded to microseconds', () => {
    assert.equal(traceContextText({ comm: 'bash', pid: 1447, cpu: 1, ns: 1038282286875123n, flags: 'd....' }),
      '            bash-1447    [001] d.... 1038282.286875: ');
    assert.equal(traceContextText({ comm: 'init', pid: 1, cpu: 0, ns: 2_499n, flags: 'd....' }),
      '            init-1       [000] d....     0.000002: ');
    assert.equal(traceContextText({ comm: 'init', pid: 1, cpu: 0, ns: 2_500n, flags: 'd....' }),
      '            init-1       [000] d....     0.000003: ');
    assert.equal(traceContextText({ comm: 'zsh', pid: 24842, cpu: 6, ns: 258544_995456_000n, flags: '.....' }),
      '             zsh-24842   [006] ..... 258544.995456: ');
  });

  test('kprobe, kretprobe, uprobe and uretprobe lines', () => {
    const c = { comm: 'bash', pid: 1447, cpu: 1, ns: 1038282_286875_000n, flags: 'd....' };
    assert.equal(traceLine(c, 'myprobe', kprobeLocation('do_sys_open+0x0/0xd6'), ' dfd=0x3 filename=0x7fffd1ec4440'),
      '            bash-1447    [001] d.... 1038282.286875: myprobe: (do_sys_open+0x0/0xd6) dfd=0x3 filename=0x7fffd1ec4440');
    assert.equal(traceLine(c, 'myretprobe', kretprobeLocation('sys_openat+0xc/0xe', 'do_sys_open'), ' arg1=0xfffffffffffffffe'),
      '            bash-1447    [001] d.... 1038282.286875: myretprobe: (sys_openat+0xc/0xe <- do_sys_open) arg1=0xfffffffffffffffe');
    const u = { comm: 'zsh', pid: 24842, cpu: 6, ns: 258544_995456_000n, flags: '.....' };
    assert.equal(traceLine(u, 'zfree_entry', uprobeLocation(0x446420n), ' arg1=0x446420 arg2=0x79'),
      '             zsh-24842   [006] ..... 258544.995456: zfree_entry: (0x446420) arg1=0x446420 arg2=0x79');
    assert.equal(traceLine(u, 'zfree_exit', uprobeLocation(0x446540n, 0x446420n), ''),
      '             zsh-24842   [006] ..... 258544.995456: zfree_exit: (0x446540 <- 0x446420)');
  });

  test('values: u decimal, s signed decimal, x 0x-hex, each at its width', () => {
    const t = (n: string) => fetchType(n)!;
    assert.equal(formatValue(0xfffffffffffffffen, t('x64')), '0xfffffffffffffffe');
    assert.equal(formatValue(0xfffffffffffffffen, t('s64')), '-2');
    assert.equal(formatValue(0xfffffffffffffffen, t('u64')), '18446744073709551614');
    assert.equal(formatValue(0xfffffffffffffffen, t('s32')), '-2');
    assert.equal(formatValue(0xfffffffffffffffen, t('u32')), '4294967294');
    assert.equal(formatValue(0x1ffn, t('u8')), '255');
    assert.equal(formatValue(0x1ffn, t('s8')), '-1');
    assert.equal(formatValue(0x1ffn, t('x8')), '0xff');
    assert.equal(formatValue(0x18000n, t('s16')), '-32768');
    assert.equal(formatValue(0x18000n, t('x16')), '0x8000');
  });
});

/** a fake hit: registers, a few mapped bytes, a symbol table */
function fakeEnv(): FetchEnv & { regs: Record<string, bigint> } {
  const mem = new Map<bigint, number>();
  const put = (addr: bigint, bytes: number[]): void => bytes.forEach((b, i) => mem.set(addr + BigInt(i), b));
  const le = (v: bigint, n: number): number[] => Array.from({ length: n }, (_, i) => Number((v >> BigInt(8 * i)) & 0xffn));
  put(0xffff888000001000n, [...Buffer.from('/etc/motd\0')]);
  put(0xffff888000002000n, le(0xffff888000001000n, 8));
  put(0xffff888000002008n, le(0xfffffffffffffff4n, 8));
  put(0xffffc90000000ff8n, le(0xffffffff81000123n, 8)); // the stack: return address at sp
  put(0xffffc90000001000n, le(0x1122334455667788n, 8));
  put(0xffffffff82000000n, le(0x6b70726f6265n, 8)); // a data symbol
  const regs: Record<string, bigint> = { di: 0xffff888000002000n, si: 0x40n, ax: 0xfffffffffffffffen, sp: 0xffffc90000000ff8n, ip: 0xffffffff81000100n, dx: 0n };
  const byte = (a: bigint): number => {
    const b = mem.get(a);
    if (b === undefined) throw new Error(`fault at ${a.toString(16)}`);
    return b;
  };
  return {
    regs,
    reg: n => regs[n] ?? 0n,
    sp: () => regs.sp,
    retval: () => regs.ax,
    arg: n => [regs.di, regs.si, regs.dx][n] ?? 0n,
    comm: () => 'kworker/0:1',
    read: (a, size) => { let v = 0n; for (let i = size - 1; i >= 0; i--) v = (v << 8n) | BigInt(byte(a + BigInt(i))); return v; },
    readString: (a, max) => { let s = ''; for (let i = 0; i < max; i++) { const c = byte(a + BigInt(i)); if (!c) break; s += String.fromCharCode(c); } return s; },
    symbol: n => (n === 'guarded' ? 0xffffffff82000000n : undefined),
    symbolize: a => (a === 0xffffffff81000123n ? 'caller+0x23/0x80' : `0x${a.toString(16)}`),
  };
}

describe('fetch arguments at a hit', () => {
  test('registers, $stack, $stackN, $argN, memory, nested dereference, strings, immediates, $comm, symbol', () => {
    const env = fakeEnv();
    const d = def('p:e f r=%rdi lo=%si:u8 sp=$stack s0=$stack0:symbol a2=$arg2:s32 p=+0(%di):x64 neg=+8(%di):s64 '
      + 'name=+0(+0(%di)):string path=+0(%si):string g=@guarded:u32 gh=@guarded+2:x16 i=\\0x2a s=\\"hi" c=$comm');
    assert.equal(fetchArgsText(d.args, env),
      ' r=0xffff888000002000 lo=64 sp=0xffffc90000000ff8 s0=caller+0x23/0x80 a2=64 p=0xffff888000001000 neg=-12'
      + ' name="/etc/motd" path=(fault) g=1919902309 gh=0x726f i=0x2a s="hi" c="kworker/0:1"');
  });

  test('a fault while fetching prints (fault), for numbers and strings, and the other arguments still print', () => {
    const env = fakeEnv();
    env.regs.di = 0x10n;
    const d = def('p:e f a=+0(%di):u64 b=+0(%di):string c=%si d=@0x20:u8 e=@nosuch');
    assert.equal(fetchArgsText(d.args, env), ' a=(fault) b=(fault) c=0x40 d=(fault) e=(fault)');
  });

  test('$retval on a return probe', () => {
    const d = def('r:e f $retval $retval:s64 rv=$retval:x32');
    assert.equal(fetchArgsText(d.args, fakeEnv()), ' arg1=0xfffffffffffffffe arg2=-2 rv=0xfffffffe');
  });
});

describe('kprobe_profile and kprobe_events lines', () => {
  test('"  %-44s %15lu %15lu"', () => {
    assert.equal(formatProfileLine({ name: 'myprobe', hits: 97, misses: 0 }),
      '  myprobe                                                   97               0\n');
    assert.equal(formatProfileLine({ name: 'r_sys_open_0', hits: 1234567, misses: 3 }),
      `  r_sys_open_0${' '.repeat(32)} ${' '.repeat(8)}1234567 ${' '.repeat(14)}3\n`);
  });

  test('definitions list back as trace_kprobe_show prints them', () => {
    assert.equal(eventDefinitionLine(def('p:myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)')),
      'p:kprobes/myprobe do_sys_open dfd=%ax filename=%dx flags=%cx mode=+4($stack)');
    assert.equal(eventDefinitionLine(def('r:myretprobe do_sys_open $retval')), 'r:kprobes/myretprobe do_sys_open arg1=$retval');
    assert.equal(eventDefinitionLine(def('r16 do_fork')), 'r16:kprobes/r_do_fork_0 do_fork');
    assert.equal(eventDefinitionLine(def('p:g/e do_fork+0x10 %di:u32')), 'p:g/e do_fork+16 arg1=%di:u32');
    assert.equal(eventDefinitionLine(def('p 0xffffffff81000010')), 'p:kprobes/p_0xffffffff81000010 0xffffffff81000010');
    assert.equal(eventDefinitionLine(def('p:zfree_entry /bin/zsh:0x46420 %ip %ax')), 'p:uprobes/zfree_entry /bin/zsh:0x0000000000046420 arg1=%ip arg2=%ax');
  });
});
