import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeEnv } from './fakeEnv';
import { compile, evalAs, run } from './helpers';

describe('handler language: C integer semantics', () => {
  test('wrap-around at each declared width', () => {
    assert.equal(evalAs('int', '0x7fffffff + 1'), '-2147483648');
    assert.equal(evalAs('unsigned int', '0u - 1', '%u'), '4294967295');
    assert.equal(evalAs('u8', '255 + 1', '%u'), '0');
    assert.equal(evalAs('s8', '127 + 1', '%d'), '-128');
    assert.equal(evalAs('short', '32767 + 1', '%d'), '-32768');
    assert.equal(evalAs('u16', '0x12345', '%x'), '2345');
    assert.equal(evalAs('u64', '0xffffffffffffffff + 1', '%llu'), '0');
    assert.equal(evalAs('long', '0x7fffffffffffffff + 1', '%ld'), '-9223372036854775808');
    assert.equal(evalAs('u64', '0xffffffffffffffffULL', '%llx'), 'ffffffffffffffff');
    assert.equal(evalAs('bool', '256', '%d'), '1');
    assert.equal(evalAs('char', "'\\xff'", '%d'), '-1');
    assert.equal(evalAs('unsigned char', "'\\xff'", '%d'), '255');
  });

  test('compound assignment and ++/-- wrap at the variable width', () => {
    assert.equal(run('u8 x = 250; x += 10; return x;'), 4n);
    assert.equal(run('s8 x = -128; x--; return x;'), 127n);
    assert.equal(run('u16 x = 0; x -= 1; return x == 65535;'), 1n);
    assert.equal(run('int i = 5; int a = i++; int b = ++i; return a * 100 + b * 10 + i;'), 5n * 100n + 7n * 10n + 7n);
    assert.equal(run('unsigned x = 1; x <<= 31; x <<= 1; return x;'), 0n);
  });

  test('signed vs unsigned division, modulo and shifts', () => {
    assert.equal(run('return -7 / 2;'), -3n);
    assert.equal(run('return -7 % 2;'), -1n);
    assert.equal(run('return 7 % -2;'), 1n);
    assert.equal(evalAs('unsigned', '-7u / 2', '%u'), String((2n ** 32n - 7n) / 2n));
    assert.equal(evalAs('long', '-8L >> 1', '%ld'), '-4');
    assert.equal(evalAs('unsigned long', '0xfffffffffffffff8UL >> 1', '%lx'), '7ffffffffffffffc');
    assert.equal(evalAs('int', '-1 >> 31', '%d'), '-1');
    assert.equal(evalAs('unsigned', '0x80000000u >> 31', '%u'), '1');
    assert.equal(evalAs('int', '1 << 31', '%d'), '-2147483648');
    assert.equal(evalAs('long', '1L << 63', '%ld'), '-9223372036854775808');
    // the shift result has the promoted LEFT type: int << long stays int
    assert.equal(evalAs('long', '1 << 32L', '%ld'), '1'); // count taken modulo 32 (documented: x86 semantics)
  });

  test('comparisons: usual arithmetic conversions decide signedness', () => {
    assert.equal(run('return -1 < 1u;'), 0n); // -1 converts to UINT_MAX
    assert.equal(run('return -1 < 1;'), 1n);
    assert.equal(run('return -1L < 1u;'), 1n); // long holds every unsigned int
    assert.equal(run('return -1 < 1UL;'), 0n);
    assert.equal(run('u8 a = 200; s8 b = -1; return a > b;'), 1n); // both promote to int
    assert.equal(run('unsigned short a = 1; return a - 2 < 0;'), 1n); // promoted to int
    assert.equal(run('unsigned int a = 1; return a - 2 < 0;'), 0n);
    assert.equal(run('long rv = regs_return_value(regs); return rv < 0;', Object.assign(new FakeEnv(), { retval: 0xfffffffffffffffen })), 1n);
  });

  test('integer literal types: decimal, hex, octal, suffixes, chars', () => {
    assert.equal(run('return sizeof(2147483647);'), 4n);
    assert.equal(run('return sizeof(2147483648);'), 8n);
    assert.equal(run('return sizeof(0xffffffff);'), 4n);
    assert.equal(run('return 0xffffffff > 0;'), 1n); // unsigned int
    assert.equal(run('return 010 + 0x10 + 10;'), 8n + 16n + 10n);
    assert.equal(run("return 'A' + '\\n' + '\\101' + '\\x41';"), 65n + 10n + 65n + 65n);
    assert.equal(run('return sizeof(1UL) + sizeof(1u) + sizeof(char) + sizeof(u16) + sizeof(void *);'), 8n + 4n + 1n + 2n + 8n);
  });

  test('casts truncate and sign-extend', () => {
    assert.equal(evalAs('long', '(s8)0x80', '%ld'), '-128');
    assert.equal(evalAs('long', '(u8)-1', '%ld'), '255');
    assert.equal(evalAs('long', '(int)0x100000001L', '%ld'), '1');
    assert.equal(evalAs('unsigned long', '(unsigned long)(int)-1', '%lx'), 'ffffffffffffffff');
    assert.equal(evalAs('unsigned long', '(unsigned long)(unsigned)-1', '%lx'), 'ffffffff');
    assert.equal(evalAs('unsigned long', '(unsigned long)(void *)16 + 1', '%lu'), '17');
  });

  test('logical operators short-circuit; ternary; comma', () => {
    const env = new FakeEnv();
    assert.equal(run('int n = 0; if (0 && printk("x")) n = 1; if (1 || printk("y")) n += 2; return n;', env), 2n);
    assert.equal(env.text, '');
    assert.equal(run('int x = 5; return x > 3 ? x * 2 : -x;'), 10n);
    assert.equal(run('int a = (1, 2, 3); return a;'), 3n);
    assert.equal(run('return !0 + !5 + ~0;'), 1n + 0n - 1n);
    assert.equal(run('unsigned x = 3; return -x > 0;'), 1n);
  });

  test('control flow: if/else, while, do-while, for, break, continue, return', () => {
    assert.equal(run('int s = 0; for (int i = 0; i < 10; i++) { if (i == 3) continue; if (i == 8) break; s += i; } return s;'), 0n + 1n + 2n + 4n + 5n + 6n + 7n);
    assert.equal(run('int n = 0; while (1) { n++; if (n >= 5) break; } return n;'), 5n);
    assert.equal(run('int n = 0; do n++; while (n < 0); return n;'), 1n);
    assert.equal(run('int i, j, c = 0; for (i = 0; i < 4; i++) for (j = 0; j < 4; j++) { if (j > i) break; c++; } return c;'), 10n);
    assert.equal(run('if (1) { if (0) return 1; else return 2; } return 3;'), 2n);
    assert.equal(run('int x = 1; { int x = 2; } return x;'), 1n);
    assert.equal(run('printk("no return");'), 0n);
  });

  test('return values are converted to int; condition handlers to 0/1', () => {
    assert.equal(run('return 0x100000002L;'), 2n);
    assert.equal(compile('regs->ax == 5', 'condition').run(Object.assign(new FakeEnv(), {})), 0n);
    const env = new FakeEnv();
    env.regs.set('ax', 5n);
    assert.equal(compile('regs->ax == 5', 'condition').run(env), 1n);
    assert.equal(compile('if (regs->ax > 4) return 7; return 0;', 'condition').run(env), 1n);
  });

  test('pointer arithmetic is scaled by the pointee size', () => {
    assert.equal(evalAs('unsigned long', '(unsigned long)((u32 *)0x1000 + 3)', '%lx'), '100c');
    assert.equal(evalAs('unsigned long', '(unsigned long)((u64 *)0x1000 - 1)', '%lx'), 'ff8');
    assert.equal(evalAs('long', '(u64 *)0x1040 - (u64 *)0x1000', '%ld'), '8');
    assert.equal(evalAs('unsigned long', '(unsigned long)((void *)0x1000 + 3)', '%lx'), '1003');
    assert.equal(run('u16 *q = (u16 *)0x2000; q++; q += 2; return (unsigned long)q - 0x2000;'), 6n);
  });
});
