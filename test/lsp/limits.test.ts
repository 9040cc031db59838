/**
 * The language server and the handler-language limits (each a clear,
 * positioned diagnostic): a 5,000-term chain is one positioned "nested too
 * deeply" diagnostic (not an internal error at 0:0), and an unknown probe
 * target is still flagged, with a "did you mean" when a symbol of the image
 * is near.
 */
import { test, describe, before, after as afterAll } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { Diagnostic } from 'vscode-languageserver-protocol';
import { repoPath } from '../util/paths';
import { LspClient, fileUri, positionOf } from './lspHarness';

const DIR = repoPath('examples', 'probes');
const HEADER = 'image "../kernel/build/kernel-x86_64.elf"\n';

describe('kprobe language server: limits and unknown symbols', { timeout: 30_000 }, () => {
  let c: LspClient;
  let n = 0;
  const open = (text: string): Promise<Diagnostic[]> => c.open(fileUri(join(DIR, `limits-${n++}.kprobe`)), text);
  before(async () => { c = await LspClient.start(); });
  afterAll(async () => { await c.stop(); });

  test('a 5,000-term chain `1 + 1 + ...` is one nesting diagnostic inside the chain, the rest of the file checked', async () => {
    const chain = Array.from({ length: 5000 }, () => '1').join(' + ');
    const text = `${HEADER}kprobe do_fork {\n  pre { return ${chain}; }\n}\nkprobe do_fork+0x4 { pre { return regs->nosuch; } }\n`;
    const diags = await open(text);
    assert.ok(!diags.some(d => /internal error/.test(d.message)), JSON.stringify(diags));
    const deep = diags.filter(d => /nested too deeply/.test(d.message));
    assert.equal(deep.length, 1, JSON.stringify(diags));
    const start = positionOf(text, 'return 1');
    assert.equal(deep[0].range.start.line, start.line);
    assert.ok(deep[0].range.start.character > start.character + 100, JSON.stringify(deep[0].range));
    assert.ok(diags.some(d => /nosuch/.test(d.message) && d.range.start.line === 4), 'the next probe is still checked');
  });

  test('an unknown probe target is flagged on the target, with a did-you-mean', async () => {
    const text = `${HEADER}kprobe do_frok { pre { return 0; } }\nkretprobe sys_opne { return { return 0; } }\n`;
    const diags = await open(text);
    const frok = diags.find(d => d.message === "unknown symbol 'do_frok' in the image (did you mean 'do_fork'?)");
    assert.ok(frok, JSON.stringify(diags));
    assert.deepEqual(frok.range.start, positionOf(text, 'do_frok'));
    assert.ok(diags.some(d => d.message === "unknown symbol 'sys_opne' in the image (did you mean 'sys_open'?)"), JSON.stringify(diags));
  });
});
