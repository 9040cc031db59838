/**
 * Which image a .kprobe document is checked against: the `image` header
 * (relative to the file), else the kprobe.image setting pulled with
 * workspace/configuration, pushed with didChangeConfiguration, or given as
 * initializationOptions; problems with it are diagnostics on the header.
 */
import { test, describe, before, after as afterAll } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoPath } from '../util/paths';
import { LspClient, after, fileUri } from './lspHarness';

const X86 = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const PROBES_DIR = repoPath('examples', 'probes');
const BODY = 'kprobe do_fork { pre { return 0; } }\n';

const labels = (items: { label: string }[]): string[] => items.map(i => i.label);

describe('kprobe language server: image selection', { timeout: 30_000 }, () => {
  let tmp: string;
  before(() => { tmp = mkdtempSync(join(tmpdir(), 'kprobe-lsp-')); });
  afterAll(() => { rmSync(tmp, { recursive: true, force: true }); });

  describe('header', () => {
    let c: LspClient;
    before(async () => { c = await LspClient.start(); });
    afterAll(async () => { await c.stop(); });

    test('a missing image is an error on the header path', async () => {
      const text = `// probes\nimage "../nowhere/missing.elf"\n${BODY}`;
      const diags = await c.open(fileUri(join(PROBES_DIR, 'missing.kprobe')), text);
      const d = diags.find(x => /cannot open image/.test(x.message));
      assert.ok(d, JSON.stringify(diags));
      assert.equal(d.severity, 1);
      assert.match(d.message, new RegExp(`${repoPath('examples', 'nowhere', 'missing.elf').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}.*ENOENT`));
      assert.deepEqual(d.range, { start: { line: 1, character: 7 }, end: { line: 1, character: 29 } });
    });

    test('a file that is not ELF is an error naming the file', async () => {
      const bad = join(tmp, 'bad.elf');
      writeFileSync(bad, 'this is not an ELF file\n');
      const text = `image "${bad}"\n${BODY}`;
      const diags = await c.open(fileUri(join(tmp, 'bad.kprobe')), text);
      const d = diags.find(x => /cannot load image/.test(x.message));
      assert.ok(d, JSON.stringify(diags));
      assert.ok(d.message.includes(bad));
      assert.equal(d.range.start.line, 0);
    });

    test('a relative image in an unsaved document is an error', async () => {
      const diags = await c.open('untitled:Untitled-1', `image "k.elf"\n${BODY}`);
      assert.ok(diags.some(x => /not a saved file/.test(x.message)), JSON.stringify(diags));
    });

    test('a rebuilt image is loaded again (cache keyed on mtime)', async () => {
      const img = join(tmp, 'rebuilt.elf');
      writeFileSync(img, 'not yet built');
      const uri = fileUri(join(tmp, 'rebuilt.kprobe'));
      const text = `image "rebuilt.elf"\n${BODY}`;
      const first = await c.open(uri, text);
      assert.ok(first.some(x => /cannot load image/.test(x.message)), JSON.stringify(first));
      copyFileSync(X86, img);
      const next = c.nextDiagnostics(uri);
      await c.watchedFilesChanged([img]);
      const second = await next;
      assert.ok(!second.some(x => /image/.test(x.message)), JSON.stringify(second));
      assert.ok(labels(await c.completion(uri, after(text, 'kprobe '))).includes('do_fork'));
    });
  });

  test('setting kprobe.image pulled with workspace/configuration (${workspaceFolder})', async () => {
    const c = await LspClient.start({
      configuration: { kprobe: { image: '${workspaceFolder}/examples/kernel/build/kernel-x86_64.elf' } },
      workspaceFolders: [repoPath()],
    });
    try {
      const uri = fileUri(join(PROBES_DIR, 'setting.kprobe'));
      const diags = await c.open(uri, BODY);
      assert.ok(!diags.some(x => /image/.test(x.message)), JSON.stringify(diags));
      assert.ok(c.configurationRequests.length > 0, 'server never asked for configuration');
      assert.ok(labels(await c.completion(uri, after(BODY, 'kprobe '))).includes('sys_open'));
    } finally {
      await c.stop();
    }
  });

  test('client without configuration support: initializationOptions, then a didChangeConfiguration push', async () => {
    const c = await LspClient.start({ initializationOptions: { image: X86 } });
    try {
      const uri = fileUri(join(tmp, 'init.kprobe'));
      const diags = await c.open(uri, BODY);
      assert.ok(!diags.some(x => /image/.test(x.message)), JSON.stringify(diags));
      assert.equal(c.configurationRequests.length, 0);
      assert.ok(labels(await c.completion(uri, after(BODY, 'kprobe '))).includes('vfs_read'));
      const next = c.nextDiagnostics(uri);
      await c.configurationChanged({ kprobe: { image: join(tmp, 'gone.elf') } });
      const pushed = await next;
      const d = pushed.find(x => /cannot open image/.test(x.message));
      assert.ok(d, JSON.stringify(pushed));
      assert.match(d.message, /from setting kprobe\.image/);
      assert.deepEqual(d.range.start, { line: 0, character: 0 });
    } finally {
      await c.stop();
    }
  });

  test('no image anywhere: no image diagnostic and no symbol completions', async () => {
    const c = await LspClient.start();
    try {
      const uri = fileUri(join(tmp, 'none.kprobe'));
      const diags = await c.open(uri, BODY);
      assert.ok(!diags.some(x => /image/.test(x.message)), JSON.stringify(diags));
      assert.deepEqual(await c.completion(uri, after(BODY, 'kprobe ')), []);
      // registers still complete, for the default architecture (x86_64)
      const text = 'kprobe do_fork { pre { regs->ip; } }\n';
      await c.change(uri, text);
      assert.ok(labels(await c.completion(uri, after(text, 'regs->'))).includes('ip'));
    } finally {
      await c.stop();
    }
  });
});
