// Handlers without string literals or statics share one empty literal pool and
// one empty statics array (a file of 10,000 probes keeps 10,000 handlers):
// each handler's own state stays its own.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeEnv } from './fakeEnv';
import { compile } from './helpers';

describe('handler language: per-handler state next to shared empty state', () => {
  test('two handlers of the same source count their statics apart', () => {
    const src = 'static int n; n++; return n;';
    const a = compile(src), b = compile(src), plain = compile('return 0;'), plain2 = compile('return 0;');
    const env = new FakeEnv();
    assert.equal(a.run(env), 1n);
    assert.equal(a.run(env), 2n);
    assert.equal(plain.run(env), 0n);
    assert.equal(b.run(env), 1n);
    assert.equal(plain2.run(env), 0n);
    assert.equal(a.run(env), 3n);
    assert.equal(b.run(env), 2n);
  });

  test('a handler\'s string literals are its own; a handler without any finds none at a literal address', () => {
    const withLit = compile('char *s = "abc"; return (long)s;');
    const addr = withLit.run(new FakeEnv());
    const env = new FakeEnv();
    compile('printk("%s", "xyz");').run(env);
    assert.equal(env.text, 'xyz');
    // the address of another handler's literal is no string in a handler without literals: reading it faults
    assert.throws(() => compile(`return *(char *)${addr}UL;`).run(new FakeEnv()), /fault|memory|string/i);
    const again = new FakeEnv();
    compile('char *s = "abc"; printk("%c", s[1]);').run(again);
    assert.equal(again.text, 'b');
  });
});
