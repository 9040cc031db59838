/**
 * Symbol completion offers the symbols of the modules a .kprobe file names
 * (`module "path.ko"` lines before the first probe, in a `//` comment until
 * the probe-file parser knows the line; extension/languageServer/moduleSymbols.ts),
 * with detail "[modname]", after the image's.
 */
import { test, describe, before, after as afterAll } from 'node:test';
import assert from 'node:assert/strict';
import { repoPath } from '../util/paths';
import { LspClient, after, fileUri } from './lspHarness';
import { complete } from '../../extension/languageServer/completion';
import { findModuleHeaders, resolveModulePath } from '../../extension/languageServer/moduleSymbols';

const DOC_PATH = repoPath('examples', 'probes', 'lsp-modules.kprobe'); // need not exist on disk
const URI = fileUri(DOC_PATH);
const KO = repoPath('examples', 'modules', 'build', 'kprobe_example-x86_64.ko');

const TEXT = `image "../kernel/build/kernel-x86_64.elf"
// module "../modules/build/kprobe_example-x86_64.ko"
kprobe handler_p
kprobe do_fork {
  pre { printk("%lx\\n", symbol("handler_")); return 0; }
}
`;

describe('kprobe language server: module symbols in completion', { timeout: 30_000 }, () => {
  let c: LspClient;
  before(async () => { c = await LspClient.start(); });
  afterAll(async () => { await c.stop(); });

  test('the commented module line is no error; probe targets offer the module\'s functions as [modname] after the image\'s symbols', async () => {
    const good = TEXT.replace('kprobe handler_p\n', '').replace('symbol("handler_")', 'symbol("do_fork")');
    assert.deepEqual(await c.open(URI, good), []);
    await c.change(URI, TEXT);
    const items = await c.completion(URI, after(TEXT, 'kprobe handler_p'));
    const item = (n: string) => items.find(i => i.label === n);
    for (const n of ['handler_pre', 'handler_post', 'handler_fault', 'kp']) assert.equal(item(n)?.detail, '[kprobe_example]', n);
    assert.ok(item('do_fork')?.detail?.startsWith('func 0x'), 'the image\'s symbols still come');
    assert.equal(item('__mod_license'), undefined, '.modinfo entries are not symbols to probe');
    assert.equal(item('printk')?.detail?.startsWith('func 0x'), true, 'an undefined symbol of the module is not its own');
  });

  test('symbol("...") strings offer them too', async () => {
    const items = await c.completion(URI, after(TEXT, 'symbol("handler_'));
    assert.equal(items.find(i => i.label === 'handler_pre')?.detail, '[kprobe_example]');
  });

  test('a module that cannot be read offers nothing and breaks nothing', async () => {
    const text = TEXT.replace('kprobe_example-x86_64.ko', 'no_such.ko');
    await c.change(URI, text);
    const items = await c.completion(URI, after(text, 'kprobe handler_p'));
    assert.equal(items.find(i => i.label === 'handler_pre'), undefined);
    assert.ok(items.some(i => i.label === 'do_fork'));
  });
});

describe('module lines and their paths', () => {
  test('bare and commented lines before the first probe, in order; later ones ignored', () => {
    const text = 'image "k.elf"\nmodule "a.ko"\n  // module "b\\"c.ko"\n/* x */\nkprobe f { }\n// module "late.ko"\n';
    assert.deepEqual(findModuleHeaders(text), ['a.ko', 'b"c.ko']);
  });

  test('relative to the document when its path is known, else through the image header; absolute as written', () => {
    assert.equal(resolveModulePath('m/x.ko', '', '/w/probes/p.kprobe'), '/w/probes/m/x.ko');
    assert.equal(resolveModulePath('/abs/x.ko', '', undefined), '/abs/x.ko');
    const image = '/w/examples/kernel/build/k.elf';
    // from /w/examples/probes/p.kprobe: image "../kernel/build/k.elf", module "../modules/x.ko"
    assert.equal(resolveModulePath('../modules/x.ko', 'image "../kernel/build/k.elf"\n', undefined, image), '/w/examples/modules/x.ko');
    assert.equal(resolveModulePath('../../m.ko', 'image "../kernel/build/k.elf"\n', undefined, image), '/w/m.ko');
    assert.equal(resolveModulePath('x.ko', 'image "../kernel/build/k.elf"\n', undefined, image), undefined, 'beside the document: its directory\'s name is unknown');
    assert.equal(resolveModulePath('x.ko', 'image "/abs/k.elf"\n', undefined, '/abs/k.elf'), undefined, 'no way to know the document\'s directory');
  });

  test('complete() with the document path and no image: the module\'s symbols alone', () => {
    const text = `// module "${KO}"\nkprobe handler_`;
    const items = complete({ text, offset: text.length, regNames: [], file: DOC_PATH });
    assert.deepEqual(items.map(i => i.label).sort(), ['cleanup_module', 'handler_fault', 'handler_post', 'handler_pre', 'init_module', 'kp']);
    assert.ok(items.every(i => i.detail === '[kprobe_example]'));
  });
});
