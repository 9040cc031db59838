/** Completion and hover over LSP against the sample x86_64 kernel image. */
import { test, describe, before, after as afterAll } from 'node:test';
import assert from 'node:assert/strict';
import { repoPath } from '../util/paths';
import { LspClient, after, fileUri, hoverText, positionOf } from './lspHarness';

const DOC_PATH = repoPath('examples', 'probes', 'lsp-completion.kprobe'); // need not exist on disk
const URI = fileUri(DOC_PATH);
const IMAGE = '../kernel/build/kernel-x86_64.elf';

const TEXT = `image "${IMAGE}"
// completion fixture
kprobe do_fork {
  pre { printk("ip=%lx\\n", regs->ip); return 0; }
  fault { return trapnr == 14; }
}
kretprobe sys_open maxactive=4 data_size=8 {
  entry { *(u64 *)ri->data = ktime_get(); return 0; }
  return { printk("%ld\\n", (long)regs_return_value(regs)); }
}
jprobe vfs_read { printk("%lx %d\\n", regs->di, current->pid); }
`;

const labels = (items: { label: string }[]): string[] => items.map(i => i.label);

describe('kprobe language server: completion and hover', { timeout: 30_000 }, () => {
  let c: LspClient;
  before(async () => {
    c = await LspClient.start();
    await c.open(URI, TEXT);
  });
  afterAll(async () => { await c.stop(); });

  test('advertises completion, hover and folding', () => {
    const caps = c.initializeResult.capabilities;
    assert.ok(caps.completionProvider?.triggerCharacters?.includes('>'));
    assert.equal(caps.hoverProvider, true);
    assert.equal(caps.foldingRangeProvider, true);
  });

  test('registers after regs->', async () => {
    const all = await c.completion(URI, after(TEXT, 'regs->'));
    const items = labels(all);
    const detail = (r: string): string | undefined => all.find(i => i.label === r)?.detail;
    assert.equal(detail('di'), 'register (pt_regs): argument 0 (arg0)');
    assert.equal(detail('ax'), 'register (pt_regs): return value');
    assert.equal(detail('ip'), 'register (pt_regs): program counter');
    assert.equal(detail('r15'), 'register (pt_regs)');
    for (const r of ['ip', 'sp', 'flags', 'ax', 'di', 'r15', 'orig_ax']) assert.ok(items.includes(r), `missing register ${r}: ${items.join(' ')}`);
    assert.ok(!items.includes('printk'), 'builtins offered after regs->');
  });

  test('fields after p->, ri->, current->', async () => {
    const edited = TEXT.replace('return 0; }\n  fault', 'p->; return 0; }\n  fault');
    await c.change(URI, edited);
    const p = labels(await c.completion(URI, after(edited, 'p->')));
    assert.deepEqual([...p].sort(), ['addr', 'flags', 'nmissed', 'offset', 'symbol_name']);
    const ri = labels(await c.completion(URI, after(edited, 'ri->')));
    assert.deepEqual([...ri].sort(), ['data', 'ret_addr', 'rp', 'task']);
    const cur = labels(await c.completion(URI, after(edited, 'current->')));
    assert.deepEqual([...cur].sort(), ['comm', 'mm', 'pid']);
    await c.change(URI, TEXT);
  });

  test('builtins and context variables in a handler body, by handler kind', async () => {
    const inPre = labels(await c.completion(URI, positionOf(TEXT, 'return 0; }', 0)));
    for (const b of ['printk', 'dump_stack', 'ktime_get', 'regs_return_value', 'smp_processor_id', 'symbol']) assert.ok(inPre.includes(b), `missing builtin ${b}`);
    assert.ok(inPre.includes('regs') && inPre.includes('p') && inPre.includes('current'));
    assert.ok(!inPre.includes('trapnr'), 'trapnr offered in a pre handler');
    const inFault = labels(await c.completion(URI, positionOf(TEXT, 'return trapnr')));
    assert.ok(inFault.includes('trapnr'));
    const inEntry = labels(await c.completion(URI, positionOf(TEXT, '*(u64 *)ri')));
    assert.ok(inEntry.includes('ri'));
  });

  test('handler kinds inside a probe block', async () => {
    const k = labels(await c.completion(URI, positionOf(TEXT, '  fault {', 2)));
    assert.deepEqual([...k].sort(), ['fault', 'post', 'pre']);
    const r = labels(await c.completion(URI, positionOf(TEXT, '  entry {', 2)));
    assert.deepEqual([...r].sort(), ['entry', 'return']);
  });

  test('kernel symbols after a probe keyword and inside symbol("', async () => {
    const afterKw = labels(await c.completion(URI, positionOf(TEXT, 'do_fork {')));
    for (const s of ['do_fork', 'sys_open', 'vfs_read']) assert.ok(afterKw.includes(s), `missing symbol ${s}`);
    const edited = TEXT.replace('return 0; }\n  fault', 'u64 a = symbol("sys_o"); return 0; }\n  fault');
    await c.change(URI, edited);
    const inSym = labels(await c.completion(URI, after(edited, 'symbol("sys_o')));
    assert.ok(inSym.includes('sys_open'));
    // not inside an ordinary string
    const inFmt = await c.completion(URI, after(edited, 'printk("ip='));
    assert.deepEqual(inFmt, []);
    await c.change(URI, TEXT);
  });

  test('probe attributes after the target', async () => {
    const kret = labels(await c.completion(URI, positionOf(TEXT, 'maxactive=4')));
    assert.deepEqual([...kret].sort(), ['data_size', 'disabled', 'maxactive']);
    const text2 = TEXT.replace('kprobe do_fork {', 'kprobe do_fork dis {');
    await c.change(URI, text2);
    assert.deepEqual(labels(await c.completion(URI, after(text2, 'do_fork dis'))), ['disabled']);
    await c.change(URI, TEXT);
  });

  test('hover: registers and context fields', async () => {
    const ip = hoverText(await c.hover(URI, after(TEXT, 'regs->')));
    assert.match(ip, /\*\*regs->ip\*\* — register of the probed context \(x86_64 pt_regs/);
    const pid = hoverText(await c.hover(URI, after(TEXT, 'current->')));
    assert.match(pid, /int current->pid/);
    const data = hoverText(await c.hover(URI, after(TEXT, 'ri->')));
    assert.match(data, /char \* ?ri->data/);
    assert.match(data, /ri->data\[0\]/);
    // ABI roles of registers (emulator/arch/abiFacts.ts) and the jump-optimization caveat on the pc
    assert.match(ip, /x86_64 pt_regs; program counter\)/);
    assert.match(ip, /jump-optimized/);
    const di = hoverText(await c.hover(URI, after(TEXT, 'regs->', 1)));
    assert.match(di, /\*\*regs->di\*\* — register of the probed context \(x86_64 pt_regs; argument 0 \(arg0\)\)/);
    assert.doesNotMatch(di, /jump-optimized/);
  });

  test('hover: arg0..arg5 name their register on the image\'s arch', async () => {
    const edited = TEXT.replace('regs->di, current->pid', 'arg0, (int)arg3');
    await c.change(URI, edited);
    const a0 = hoverText(await c.hover(URI, positionOf(edited, 'arg0', 1)));
    assert.match(a0, /unsigned long arg0/);
    assert.match(a0, /On x86_64 this is `regs->di`/);
    const a3 = hoverText(await c.hover(URI, positionOf(edited, 'arg3', 1)));
    assert.match(a3, /`regs->cx`/);
    await c.change(URI, TEXT);
  });

  test('nothing inside comments', async () => {
    assert.deepEqual(await c.completion(URI, after(TEXT, '// completion')), []);
  });

  test('hover: builtins, handler kinds, probe keywords, context variables, symbols', async () => {
    const printk = hoverText(await c.hover(URI, positionOf(TEXT, 'printk', 2)));
    assert.match(printk, /printk\(const char \*fmt, \.\.\.\)/);
    assert.match(printk, /kernel log/);
    const rv = hoverText(await c.hover(URI, positionOf(TEXT, 'regs_return_value', 3)));
    assert.match(rv, /return-value register/);
    assert.match(rv, /On x86_64 this reads `regs->ax`/);
    const pre = hoverText(await c.hover(URI, positionOf(TEXT, 'pre {', 1)));
    assert.match(pre, /jump-optimized/);
    const entry = hoverText(await c.hover(URI, positionOf(TEXT, 'entry {', 1)));
    assert.match(entry, /\*\*entry\*\* handler \(kretprobe\)/);
    const ret = hoverText(await c.hover(URI, positionOf(TEXT, 'return {', 1)));
    assert.match(ret, /\*\*return\*\* handler/);
    const fault = hoverText(await c.hover(URI, positionOf(TEXT, 'fault {', 1)));
    assert.match(fault, /trapnr/);
    const kret = hoverText(await c.hover(URI, positionOf(TEXT, 'kretprobe', 1)));
    assert.match(kret, /maxactive/);
    const trapnr = hoverText(await c.hover(URI, positionOf(TEXT, 'trapnr', 1)));
    assert.match(trapnr, /int trapnr/);
    const sym = hoverText(await c.hover(URI, positionOf(TEXT, 'sys_open', 1)));
    assert.match(sym, /\*\*sys_open\*\* — func, global, at `0xffffffff8[0-9a-f]{7}`/);
    // the return statement inside a handler body is not the handler kind
    assert.equal(await c.hover(URI, positionOf(TEXT, 'return 0', 1)), null);
    assert.equal(await c.hover(URI, positionOf(TEXT, 'completion fixture', 1)), null);
  });

  test('folding ranges for probe and handler blocks', async () => {
    const ranges = await c.folding(URI);
    assert.ok(ranges.some(r => r.startLine === 2 && r.endLine === 4), JSON.stringify(ranges));
    assert.ok(ranges.some(r => r.startLine === 6 && r.endLine === 8), JSON.stringify(ranges));
  });

  test('DWARF names of the probed function in pre / entry / jprobe handlers; members after name->; no "not declared" for them (the editor accepts what a run compiles)', async () => {
    const text = `image "${IMAGE}"
kprobe vfs_read {
  pre { printk("%s %d\\n", file->name, file->fd); return 0; }
}
kprobe vfs_read { post { printk("x"); } }
`;
    const uri = fileUri(repoPath('examples', 'probes', 'lsp-dwarf.kprobe'));
    const diags = await c.open(uri, text);
    assert.deepEqual(diags.filter(d => d.severity === 1).map(d => d.message), [], 'file->name checks as a run would compile it');
    const at = await c.completion(uri, after(text, 'printk('));
    const file = at.find(i => i.label === 'file');
    assert.ok(file, labels(at).join(' '));
    assert.equal(file.detail, 'struct file * (parameter of vfs_read)');
    for (const n of ['buf', 'count', 'pos']) assert.ok(labels(at).includes(n), n);
    const members = labels(await c.completion(uri, after(text, 'file->')));
    assert.deepEqual(members, ['name', 'data', 'size', 'fd', 'mode']);
    // a post handler runs after the instruction: no program names offered there
    const post = labels(await c.completion(uri, after(text, 'post { ')));
    assert.ok(!post.includes('file'), post.join(' '));
  });
});
