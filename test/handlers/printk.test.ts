import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { formatPrintk } from '../../emulator/handlers';
import { FakeEnv } from './fakeEnv';
import { compile, diags } from './helpers';

const env = new FakeEnv();
env.map(0x4000n, 16);
env.putBytes(0x4000n, 'kernel\0');
env.symbols.set('do_fork', 0xffffffff81000100n);
const fmt = (f: string, ...args: (bigint | string)[]): string => formatPrintk(f, args, env);

describe('printk formatting', () => {
  test('integer conversions and length modifiers truncate like a va_list read', () => {
    assert.equal(fmt('%d %i %u', -1n, 42n, -1n), '-1 42 4294967295');
    assert.equal(fmt('%ld %lu %lld %llu', -1n, -1n, -5n, 5n), '-1 18446744073709551615 -5 5');
    assert.equal(fmt('%x %X %lx %llx', 255n, 255n, -1n, 0x1234n), 'ff FF ffffffffffffffff 1234');
    assert.equal(fmt('%hhd %hhu %hd %hu', 0x1ffn, 0x1ffn, 0x18000n, -1n), '-1 255 -32768 65535');
    assert.equal(fmt('%d', 0x100000005n), '5');
    assert.equal(fmt('%zu %zd', -1n, -1n), '18446744073709551615 -1');
    assert.equal(fmt('%o %#o %#x %#X %#x', 8n, 8n, 255n, 255n, 0n), '10 010 0xff 0XFF 0x0');
  });

  test('field widths, zero padding, left-justify, sign flags, precision', () => {
    assert.equal(fmt('[%5d][%-5d][%05d][%+d][% d]', 42n, 42n, 42n, 42n, 42n), '[   42][42   ][00042][+42][ 42]');
    assert.equal(fmt('[%05d][%-05d]', -42n, -42n), '[-0042][-42  ]');
    assert.equal(fmt('[%08lx][%#010x]', 0xbeefn, 0xbeefn), '[0000beef][0x0000beef]');
    assert.equal(fmt('[%.3d][%6.3d][%.0d]', 7n, 7n, 0n), '[007][   007][]');
    assert.equal(fmt('[%*d][%-*d][%.*s]', 4n, 1n, 3n, 2n, 2n, 'abcdef'), '[   1][2  ][ab]');
    assert.equal(fmt('[%*d]', -4n, 1n), '[1   ]');
  });

  test('strings and characters', () => {
    assert.equal(fmt('%s|%8s|%-8s|%.3s', 0x4000n, 0x4000n, 0x4000n, 0x4000n), 'kernel|  kernel|kernel  |ker');
    assert.equal(fmt('%s %s', 0n, 0xdead0000n), '(null) (efault)');
    assert.equal(fmt('%c%c%3c', 72n, 0x169n, 33n), 'Hi  !');
    assert.equal(fmt('100%% %s', 'sure'), '100% sure');
  });

  test('pointers: %p prints like %px (documented), %pS symbolizes', () => {
    assert.equal(fmt('%p %px', 0xffffffff81000000n, 0x1000n), 'ffffffff81000000 0000000000001000');
    assert.equal(fmt('0x%p', 0n), '0x0000000000000000');
    assert.equal(fmt('%pS|%ps|%pK', 0xffffffff81000104n, 0xffffffff81000104n, 0x10n), 'do_fork+0x4/0x40|do_fork|0000000000000010');
    assert.equal(fmt('%pS', 0x10n), '0x0000000000000010');
  });

  test('log level prefixes are stripped; unknown conversions and missing arguments print verbatim', () => {
    assert.equal(fmt('\x016hello %d', 1n), 'hello 1');
    assert.equal(fmt('%q %d', 1n), '%q 1');
    assert.equal(fmt('%d %d', 1n), '1 %d');
  });

  test('printk in a snippet: literal concatenation, KERN_INFO, %s of a literal and of memory', () => {
    const e = new FakeEnv();
    e.map(0x4000n, 16); e.putBytes(0x4000n, 'kernel\0');
    const n = compile('return printk(KERN_INFO "a=%d " "s=%s t=%s %c\\n", -3, "lit", (char *)0x4000, \'z\');').run(e);
    assert.equal(e.text, 'a=-3 s=lit t=kernel z\n');
    assert.equal(n, BigInt('a=-3 s=lit t=kernel z\n'.length));
  });

  test('format/argument mismatches are compile warnings with positions', () => {
    const d = diags('printk("%d %d\\n", 1);');
    assert.equal(d.length, 1);
    assert.equal(d[0].severity, 'warning');
    assert.match(d[0].message, /expects 2 arguments but 1 is given/);
    const s = diags('printk("%s\\n", 5);');
    assert.equal(s[0].severity, 'warning');
    assert.equal(s[0].column, 16);
    assert.match(s[0].message, /%s expects a string/);
  });
});
