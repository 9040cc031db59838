/**
 * The shipped bundle over the protocol: `node dist/languageServer.js --stdio`
 * (what the extension's language client starts) initializes, publishes
 * diagnostics, completes and hovers. The other LSP tests bundle the server
 * from source; this one tests the file `npm run build` produces (npm test
 * builds dist/ before running the tests).
 */
import { test, describe, before, after as afterAll } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { repoPath } from '../util/paths';
import { LspClient, after, fileUri, hoverText, positionOf } from './lspHarness';

const DIST_SERVER = repoPath('dist', 'languageServer.js');
const DIR = repoPath('examples', 'probes');
const HEADER = 'image "../kernel/build/kernel-x86_64.elf"\n';

describe('shipped language server bundle (dist/languageServer.js --stdio)', { timeout: 30_000 }, () => {
  let c: LspClient | undefined;
  before(async () => {
    assert.ok(existsSync(DIST_SERVER), `${DIST_SERVER} does not exist: run \`npm run build\` first (npm test builds dist/ before running the tests)`);
    c = await LspClient.start({ script: DIST_SERVER });
  });
  afterAll(async () => { if (c) assert.equal(await c.stop(), 0, 'the server exits with 0 after shutdown/exit'); });

  const client = (): LspClient => { assert.ok(c, 'the server did not start'); return c; };

  test('initializes with completion, hover and folding', () => {
    const caps = client().initializeResult.capabilities;
    assert.equal(caps.hoverProvider, true);
    assert.ok(caps.completionProvider?.triggerCharacters?.includes('>'));
    assert.equal(caps.foldingRangeProvider, true);
  });

  test('diagnostics: a clean file, then a syntax error and an unknown symbol at their positions', async () => {
    const uri = fileUri(join(DIR, 'bundle-diag.kprobe'));
    const good = `${HEADER}kprobe do_fork {\n  pre { printk("%lx\\n", regs->di); return 0; }\n}\n`;
    assert.deepEqual(await client().open(uri, good), []);
    const bad = `${HEADER}kprobe no_such_function { pre { return 0; } }\nkprobe do_fork {\n  pre { printk("x\\n") return 0; }\n}\n`;
    const diags = await client().change(uri, bad);
    const sym = diags.find(d => /no_such_function/.test(d.message));
    assert.ok(sym, JSON.stringify(diags));
    assert.deepEqual(sym.range.start, positionOf(bad, 'no_such_function'));
    const syntax = diags.find(d => d !== sym);
    assert.ok(syntax, JSON.stringify(diags));
    assert.equal(syntax.severity, 1);
    assert.equal(syntax.range.start.line, 3);
    assert.ok(diags.every(d => d.source === 'kprobe'));
    client().close(uri);
  });

  test('completion of registers and kernel symbols; hover on a builtin', async () => {
    const uri = fileUri(join(DIR, 'bundle-complete.kprobe'));
    const text = `${HEADER}kprobe do_fork {\n  pre { printk("%lx\\n", regs->di); return 0; }\n}\n`;
    await client().open(uri, text);
    const regs = (await client().completion(uri, after(text, 'regs->'))).map(i => i.label);
    for (const r of ['ip', 'sp', 'di', 'ax']) assert.ok(regs.includes(r), `missing register ${r}: ${regs.join(' ')}`);
    const syms = (await client().completion(uri, positionOf(text, 'do_fork {'))).map(i => i.label);
    assert.ok(syms.includes('do_fork') && syms.includes('sys_open'), 'kernel symbols of the image');
    const h = hoverText(await client().hover(uri, positionOf(text, 'printk', 1)));
    assert.match(h, /printk\(const char \*fmt, \.\.\.\)/);
    client().close(uri);
  });

  test('the shipped server loads dist/decoders.js on demand: a kprobe inside an instruction is a warning', async () => {
    const uri = fileUri(join(DIR, 'bundle-split.kprobe'));
    const diags = await client().open(uri, `${HEADER}kprobe do_fork+0x3 { pre { return 0; } }\n`);
    assert.equal(diags.length, 1, JSON.stringify(diags));
    assert.match(diags[0].message, /^do_fork\+0x3 is inside "mov rbp, rsp"/);
    client().close(uri);
  });
});
