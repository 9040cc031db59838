/**
 * The tokenizer's character classes and punctuators, checked token by token
 * on the edges (it classifies by character code and looks punctuators up by
 * length; the longest punctuator at a position wins), and the `image` header
 * read alone (parseProbeFileImage) agreeing with the whole parse.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { tokenize } from '../../emulator/handlers/lexer';
import { parseProbeFile, parseProbeFileImage } from '../../emulator/handlers';

const toks = (src: string): string[] => tokenize(src).map(t => `${t.kind}:${t.text}`);

describe('handler tokenizer', () => {
  test('the longest punctuator wins', () => {
    assert.deepEqual(toks('a<<=b>>=c...d->e++--f<<g>>h<=i>=j==k!=l&&m||n'), [
      'ident:a', 'punct:<<=', 'ident:b', 'punct:>>=', 'ident:c', 'punct:...', 'ident:d', 'punct:->', 'ident:e', 'punct:++', 'punct:--',
      'ident:f', 'punct:<<', 'ident:g', 'punct:>>', 'ident:h', 'punct:<=', 'ident:i', 'punct:>=', 'ident:j', 'punct:==', 'ident:k',
      'punct:!=', 'ident:l', 'punct:&&', 'ident:m', 'punct:||', 'ident:n', 'eof:']);
    assert.deepEqual(toks('+=-=*=/=%=&=|=^=&&=..'), ['punct:+=', 'punct:-=', 'punct:*=', 'punct:/=', 'punct:%=', 'punct:&=', 'punct:|=', 'punct:^=',
      'punct:&&', 'punct:=', 'punct:.', 'punct:.', 'eof:']);
    assert.deepEqual(toks('+-*/%<>=!~&|^?:;,.()[]{}'), [...'+-*/%<>', '=', ...'!~&|^?:;,.()[]{}'].map(c => `punct:${c}`).concat('eof:')
      .reduce<string[]>((a, t) => (a.length && a[a.length - 1] === 'punct:>' && t === 'punct:=' ? [...a.slice(0, -1), 'punct:>='] : [...a, t]), []));
  });

  test('identifiers, numbers and what is neither', () => {
    assert.deepEqual(toks('_a9 Zz_ a.b p->addr'), ['ident:_a9', 'ident:Zz_', 'ident:a', 'punct:.', 'ident:b', 'ident:p', 'punct:->', 'ident:addr', 'eof:']);
    assert.deepEqual(toks('0x1fUL 017 10 .5 1.5 12ab 0b101'), ['number:0x1fUL', 'number:017', 'number:10', 'error:.5', 'error:1.5', 'error:12ab', 'number:0b101', 'eof:']);
    assert.deepEqual(toks('a.5'), ['ident:a', 'error:.5', 'eof:']);
    assert.deepEqual(toks('@ $ é `'), ['error:@', 'error:$', 'error:é', 'error:`', 'eof:']);
    const n = tokenize('0x10ull')[0];
    assert.equal(n.value, 16n);
    assert.equal(n.unsigned, true);
    assert.equal(n.longs, 2);
  });

  test('number values and flags, with and without suffixes, short and long', () => {
    const num = (src: string): unknown => {
      const [t] = tokenize(src);
      return t.kind === 'number' ? [t.text, t.value, t.decimal, t.unsigned, t.longs, t.column, t.endColumn] : [t.kind, t.text, t.message];
    };
    const cases: [string, unknown][] = [
      ['0', ['0', 0n, true, false, 0, 1, 2]],
      ['7', ['7', 7n, true, false, 0, 1, 2]],
      ['00', ['00', 0n, false, false, 0, 1, 3]],
      ['0x0', ['0x0', 0n, false, false, 0, 1, 4]],
      ['0X1f', ['0X1f', 31n, false, false, 0, 1, 5]],
      ['0xABCDEFabcdef12', ['0xABCDEFabcdef12', 0xabcdefabcdef12n, false, false, 0, 1, 17]],
      ['0xffffffffffffffff', ['0xffffffffffffffff', 0xffffffffffffffffn, false, false, 0, 1, 19]],
      ['9999999999999999', ['9999999999999999', 9999999999999999n, true, false, 0, 1, 17]],
      ['18446744073709551615', ['18446744073709551615', 18446744073709551615n, true, false, 0, 1, 21]],
      ['10u', ['10u', 10n, true, true, 0, 1, 4]],
      ['10l', ['10l', 10n, true, false, 1, 1, 4]],
      ['0x10LLU', ['0x10LLU', 16n, false, true, 2, 1, 8]],
      ['012', ['012', 10n, false, false, 0, 1, 4]],
      ['0b11', ['0b11', 3n, false, false, 0, 1, 5]],
      ['0x', ['error', '0x', "invalid number literal '0x'"]],
      ['0xg', ['error', '0xg', "invalid number literal '0xg'"]],
      ['09', ['error', '09', "invalid digit in octal literal '09'"]],
      ['18446744073709551616', ['error', '18446744073709551616', "integer literal '18446744073709551616' is too large for 64 bits"]],
      ['0x10000000000000000', ['error', '0x10000000000000000', "integer literal '0x10000000000000000' is too large for 64 bits"]],
    ];
    for (const [src, want] of cases) assert.deepEqual(num(src), want, src);
  });

  test('positions across lines, comments and strings', () => {
    const t = tokenize('a /* x\ny */ b // c\n  "s\\n" \'q\'');
    assert.deepEqual(t.map(x => [x.kind, x.text, x.line, x.column, x.endLine, x.endColumn]), [
      ['ident', 'a', 1, 1, 1, 2], ['ident', 'b', 2, 6, 2, 7], ['string', '"s\\n"', 3, 3, 3, 8], ['char', "'q'", 3, 9, 3, 12], ['eof', '', 3, 12, 3, 12]]);
    assert.equal(t[2].str, 's\n');
    assert.equal(t[3].value, 113n);
  });
});

describe('the image header alone (parseProbeFileImage)', () => {
  const cases: Record<string, string> = {
    first: 'image "a.elf"\nkprobe do_fork { pre { return 0; } }\n',
    none: 'kprobe do_fork { pre { return 0; } }\n',
    afterProbe: 'kprobe do_fork { pre { return 0; } }\nimage "late.elf"\n',
    duplicate: 'image "a.elf";\nimage "b.elf"\n',
    afterGarbage: 'what is this\nimage "g.elf"\n',
    afterBadProbe: 'kprobe { }\nimage "after-bad.elf"\n',
    afterBatch: 'batch { kprobe do_fork { } }\nimage "x.elf"\n',
    notString: 'image a.elf\nimage "second.elf"\n',
    afterEvent: 'p:myprobe do_fork\nimage "ev.elf"\n',
    empty: '',
    commentOnly: '// image "no.elf"\n/* image "no.elf" */\n',
    // longer than the first prefix of tokens parseProbeFileImage reads
    longProbeThenImage: `kprobe do_fork { pre { int x; ${'x = 1; '.repeat(300)}return 0; } }\nimage "late.elf"\n`,
    longGarbageThenImage: `${'what '.repeat(5000)}\nimage "g.elf"\n`,
    longBadProbeThenImage: `kprobe { ${'1 '.repeat(1000)} }\nimage "after-bad.elf"\n`,
    longBatchThenImage: `batch { ${'kprobe do_fork { } '.repeat(200)} }\nimage "x.elf"\n`,
    unterminatedLongProbe: `kprobe do_fork { pre { ${'x = 1; '.repeat(300)}\nimage "never.elf"\n`,
    manyProbes: `image "many.elf"\n${'kprobe do_fork { pre { return 0; } }\n'.repeat(2000)}`,
  };
  for (const [name, text] of Object.entries(cases)) {
    test(name, () => {
      assert.deepEqual(parseProbeFileImage(text, `${name}.kprobe`), parseProbeFile(text, `${name}.kprobe`).file.image);
    });
  }
});
