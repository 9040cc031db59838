/**
 * printk's formatting (emulator/kernel/printk.ts vsprintf, the engine's
 * _printk for modules) against Linux's own expectations: the cases of
 * Linux's lib/test_printf.c (test_basic, test_number, test_string, the
 * NULL / invalid pointer cases, hex_string), its lib/test_siphash.c vector
 * for siphash_1u64, and lib/vsprintf.c's pointer rules: %p is ptr_to_id's
 * hash (the low 32 bits of siphash_1u64 with the boot key, printed as 16
 * zero-padded hex digits on 64-bit, no 0x), NULL and error pointers are
 * not hashed, no_hash_pointers prints the raw value, %px is raw, %pS
 * symbol+0xoff/0xsize [module], %ps symbol [module], %pB the symbol of the
 * address before (a return address); %n stops the output.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { hashPointer, noHashPointers, ptrKey, setKernelCmdline, siphash1u64, vsprintf, VsprintfEnv } from '../../emulator/kernel/printk';

/** a guest memory of strings at fake addresses: put() returns the address of a NUL-terminated copy */
class Strings {
  private next = 0xffff888000100000n;
  private readonly at = new Map<bigint, Uint8Array>();
  put(s: string | Uint8Array): bigint {
    const a = this.next;
    this.at.set(a, typeof s === 'string' ? new TextEncoder().encode(s) : s);
    this.next += 0x1000n;
    return a;
  }
  read(a: bigint): Uint8Array | null { return this.at.get(a) ?? null; }
}

const KEY = ptrKey(0n);
function envOf(mem: Strings, over: Partial<VsprintfEnv> = {}): VsprintfEnv {
  return {
    readString: (a, max) => mem.read(a)?.slice(0, max) ?? null,
    readBytes: (a, len) => mem.read(a)?.slice(0, len) ?? null,
    symbol: () => undefined,
    noHashPointers: false,
    ptrKey: KEY,
    ...over,
  };
}

/** vsprintf of fmt with the arguments (numbers / bigints as the register values; strings put in memory) */
function fmt(format: string, args: readonly (number | bigint | string)[], over: Partial<VsprintfEnv> = {}): string {
  const mem = new Strings();
  const vals = args.map(a => (typeof a === 'string' ? mem.put(a) : BigInt.asUintN(64, BigInt(a))));
  let i = 0;
  const out = vsprintf(new TextEncoder().encode(format), { next: () => vals[i++] ?? 0n }, envOf(mem, over));
  return new TextDecoder('latin1').decode(out);
}

describe("printk's vsprintf: Linux's lib/test_printf.c cases", () => {
  test('test_basic', () => {
    assert.equal(fmt('', []), '');
    assert.equal(fmt('100%%', []), '100%');
    assert.equal(fmt('xxx%cyyy', ['%'.charCodeAt(0)]), 'xxx%yyy');
    assert.equal(fmt('xxx%cyyy', [0]), 'xxx\0yyy');
  });
  test('test_number (a 0 with precision 0 still prints "0", as the kernel does)', () => {
    assert.equal(fmt('%#-12x', [0x1234abcd]), '0x1234abcd  ');
    assert.equal(fmt('%#12x', [0x1234abcd]), '  0x1234abcd');
    assert.equal(fmt('%d|%03d|%3d|%+d|% d|%+d|% d', [0, 1, 12, 123, 1234, -123, -1234]), '0|001| 12|+123| 1234|-123|-1234');
    assert.equal(fmt('%hhu|%hhu|%hhu|%hhu|%hhu', [0, 1, 257, 128, -1]), '0|1|1|128|255');
    assert.equal(fmt('%hhd|%hhd|%hhd|%hhd|%hhd', [0, 1, 257, 128, -1]), '0|1|1|-128|-1');
    assert.equal(fmt('%ho%ho%#ho', [1037, 5282, -11627]), '2015122420151225');
    assert.equal(fmt('%.2d|%.1d|%.0d|%.*d|%1.0d', [0, 0, 0, 0, 0, 0]), '00|0|0|0|0');
    // char val = -16 passed as int: %#02x of it, of val & 0xff, of (u8)val
    assert.equal(fmt('%#02x|%#02x|%#02x', [-16, 0xf0, 0xf0]), '0xfffffff0|0xf0|0xf0');
  });
  test('test_string (a negative * precision is 0, an omitted one none, as the kernel does)', () => {
    assert.equal(fmt('%s%.0s', ['', '123']), '');
    assert.equal(fmt('%s|%.3s|%.*s', ['ABCD', 'abcdef', 3, '123456']), 'ABCD|abc|123');
    assert.equal(fmt('%-3s|%3s|%-*s|%*s|%*s', ['1', '2', 3, '3', 3, '4', -3, '5']), '1  |  2|3  |  4|5  ');
    assert.equal(fmt('%-10.4s', ['123456']), '1234      ');
    assert.equal(fmt('%10.4s', ['123456']), '      1234');
    assert.equal(fmt('%4.*s', [-5, '123456']), '    ');
    assert.equal(fmt('%.s', ['123456']), '123456');
    assert.equal(fmt('%.s|%.0s|%.*s', ['a', 'b', 0, 'c']), 'a||');
    assert.equal(fmt('%-3.s|%-3.0s|%-3.*s', ['a', 'b', 0, 'c']), 'a  |   |   ');
  });
  test('null_pointer and invalid_pointer (6.1: NULL is not hashed; a string at an invalid address is "(efault)")', () => {
    assert.equal(fmt('%p', [0]), '0000000000000000');
    assert.equal(fmt('%px', [0]), '0000000000000000');
    assert.equal(fmt('%px', [0xab]), '00000000000000ab');
    assert.equal(fmt('%s', [0]), '(null)');
    assert.equal(fmt('%s', [0xab]), '(efault)');
  });
  test('hex_string', () => {
    const buf = Uint8Array.of(0xc0, 0xff, 0xee);
    const mem = new Strings();
    const a = mem.put(buf);
    const run = (f: string, args: bigint[]): string => {
      let i = 0;
      return new TextDecoder().decode(vsprintf(new TextEncoder().encode(f), { next: () => args[i++] }, envOf(mem)));
    };
    assert.equal(run('%3ph|%3phC|%3phD|%3phN', [a, a, a, a]), 'c0 ff ee|c0:ff:ee|c0-ff-ee|c0ffee');
    assert.equal(run('%*ph|%*phC|%*phD|%*phN', [3n, a, 3n, a, 3n, a, 3n, a]), 'c0 ff ee|c0:ff:ee|c0-ff-ee|c0ffee');
  });
});

describe("printk's %p: ptr_to_id, no_hash_pointers, symbols", () => {
  test("siphash_1u64 gives lib/test_siphash.c's vector 8 (key 00..0f, input bytes 00..07)", () => {
    assert.equal(siphash1u64(0x0706050403020100n, [0x0706050403020100n, 0x0f0e0d0c0b0a0908n]), 0x93f5f5799a932462n);
  });
  test('%p prints the hash as 16 digits, the upper 8 zero, never the address; the key follows the machine seed', () => {
    const PTR = 0xffff0123456789abn;
    const out = fmt('%p', [PTR]);
    assert.match(out, /^00000000[0-9a-f]{8}$/);
    assert.equal(out, (siphash1u64(PTR, KEY) & 0xffffffffn).toString(16).padStart(16, '0'));
    assert.equal(BigInt('0x' + out), hashPointer(PTR, KEY));
    assert.notEqual(out, fmt('%p', [PTR], { ptrKey: ptrKey(1n) }), 'another seed, another key');
    assert.equal(fmt('%p', [PTR], { noHashPointers: true }), 'ffff0123456789ab');
    assert.equal(fmt('%px|%pK', [PTR, PTR]), `ffff0123456789ab|${out}`, '%pK with kptr_restrict 0 is %p');
    // error pointers print raw; %pe names them
    assert.equal(fmt('%p|%pe', [-11, -11]), 'fffffffffffffff5|-11');
    // a width pads the hash with spaces unless 0 is given
    assert.equal(fmt('[%20p]', [PTR]), `[${' '.repeat(12)}${out.replace(/^0+/, '')}]`);
  });
  test('%pS / %ps / %pB: symbol+0xoff/0xsize, the module in brackets; an address with no symbol as 0x...', () => {
    const symbol = (a: bigint) => (a >= 0x1000n && a < 0x1040n ? { name: 'do_fork', offset: a - 0x1000n, size: 0x40n }
      : a >= 0x2000n && a < 0x2010n ? { name: 'handler_pre', offset: a - 0x2000n, size: 0x10n, module: 'kprobe_example' } : undefined);
    assert.equal(fmt('%pS|%ps|%pB', [0x1010n, 0x1010n, 0x1040n], { symbol }), 'do_fork+0x10/0x40|do_fork|do_fork+0x40/0x40');
    assert.equal(fmt('%pS|%ps', [0x2000n, 0x2004n], { symbol }), 'handler_pre+0x0/0x10 [kprobe_example]|handler_pre [kprobe_example]');
    assert.equal(fmt('%pS', [0x5000n], { symbol }), '0x5000');
  });
  test('the kernel command line: no_hash_pointers as a word of it', () => {
    const k = {};
    assert.equal(noHashPointers(k), false);
    setKernelCmdline(k, 'console=ttyS0 no_hash_pointers quiet');
    assert.equal(noHashPointers(k), true);
    setKernelCmdline(k, 'no_hash_pointers_not');
    assert.equal(noHashPointers(k), false);
  });
  test('%n and unknown conversions end the output (Linux cannot tell how many arguments they take)', () => {
    assert.equal(fmt('a%nb%d', [0, 1]), 'a');
    assert.equal(fmt('a%qb', [0]), 'a');
  });
});
