/**
 * Linux's samples/kprobes/kprobe_example.c and kretprobe_example.c, from
 * Debian's linux-source-6.1 (test/modules/linux/fetch-test-kprobes.sh; never
 * committed), built unmodified with the headers' Kbuild-like Makefile
 * (make -C examples/include M=<samples/kprobes> ARCH=... CONFIG_SAMPLE_KPROBES=m
 * CONFIG_SAMPLE_KRETPROBES=m) for x86_64, aarch64 and riscv64, loaded with
 * `kprobe-run run --module` and with busybox's insmod from user space, the
 * probed symbol given as the module string parameter (symbol= / func=).
 *
 * The expected lines are computed from the fetched source: the pr_fmt
 * prefix and each pr_info / pr_err format string the file has for the
 * arch (its #ifdef CONFIG_X86 / CONFIG_ARM64 / CONFIG_RISCV branch), filled
 * with the known values: the symbol, its address from the kernel's ELF
 * symbols hashed as Linux's %p hashes it (ptr_to_id: siphash_1u64 with the
 * boot key, emulator/kernel/printk.ts ptrKey; raw with no_hash_pointers on
 * the kernel command line), the probed pc (x86: after the int3), errno
 * values; a register the test cannot know (flags, pstate, status) matches
 * any hex value. kretprobe_example's entry handler skips kernel threads
 * (current->mm is NULL for them): the sample kernel forks only from kernel
 * threads, so its return handler never prints.
 *
 * Without the fetched source each test skips saying what to run, except
 * in CI (CI=true), where .ci/run fetches it first, so it fails.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadElf } from '../../emulator/elf/elfFile';
import { Machine } from '../../emulator/machine';
import { hashPointer, ptrKey, setKernelCmdline } from '../../emulator/kernel/printk';
import { runCli } from '../../emulator/cli/main';
import { captureIo } from '../../emulator/cli/io';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { KBUILD_ARCHES, builtModule, kbuild, unavailable } from './kbuild';
import { unfetched } from '../util/fetched';

const SAMPLES = repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1', 'samples', 'kprobes');
const KERNEL = (arch: string): string => repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);
const CONFIG = { x86_64: 'CONFIG_X86', aarch64: 'CONFIG_ARM64', riscv64: 'CONFIG_RISCV' } as const;
const DEB = { x86_64: 'amd64', aarch64: 'arm64', riscv64: 'riscv64' } as const;
/** <linux/kallsyms.h> in 6.1 (the size of the samples' symbol buffers) */
const KSYM_NAME_LEN = 512;
const LONG = 'x'.repeat(KSYM_NAME_LEN);
type Arch = typeof KBUILD_ARCHES[number];

// ---------------------------------------------------------------- the source's format strings

/** a function's body in a C file (from its definition to the closing brace at column 0) */
function body(src: string, fn: string): string {
  const m = new RegExp(`^[^\\n;]*\\b${fn}\\([^)]*\\)\\n\\{\\n`, 'm').exec(src);
  assert.ok(m, `${fn}() in the sample`);
  return src.slice(m.index + m[0].length, src.indexOf('\n}\n', m.index));
}

/** the format strings of the pr_*() calls in a piece of C, in order (adjacent literals joined, C escapes read) */
function formats(code: string): string[] {
  return [...code.matchAll(/\bpr_(?:info|err|warn)\(((?:\s*"(?:[^"\\]|\\.)*")+)/g)]
    .map(m => [...m[1].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map(x => x[1]).join('').replace(/\\n/g, '\n').replace(/\\t/g, '\t').replace(/\\"/g, '"'));
}

/** the formats inside `#ifdef CONFIG` ... `#endif` of a function */
function archFormats(src: string, fn: string, config: string): string[] {
  const b = body(src, fn);
  const m = new RegExp(`#ifdef ${config}\\n([\\s\\S]*?)#endif`).exec(b);
  assert.ok(m, `${fn}() has a ${config} branch`);
  return formats(m[1]);
}

/** the prefix pr_fmt() gives a function's lines ("%s: " fmt, __func__ in kprobe_example.c; none without pr_fmt) */
function prefix(src: string, fn: string): string {
  if (/#define pr_fmt\(fmt\) "%s: " fmt, __func__/.test(src)) return `${fn}: `;
  assert.ok(!/#define pr_fmt/.test(src), 'a pr_fmt this test knows');
  return '';
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** a register value the test cannot know */
const ANY_HEX = /[0-9a-f]+/;

/** a format filled with values (text as is, a RegExp for a value that may be anything of its kind), as a whole-line RegExp */
function line(pre: string, format: string, values: readonly (string | RegExp)[]): RegExp {
  const parts = format.replace(/\n$/, '').split(/(%[-+ #0]*\d*(?:\.\d+)?(?:hh|h|ll|l|z)?[a-zA-Z%])/);
  let i = 0;
  const re = parts.map((p, k) => {
    if (k % 2 === 0) return esc(p);
    if (p === '%%') return '%';
    const v = values[i++];
    assert.ok(v !== undefined, `a value for ${p} in ${JSON.stringify(format)}`);
    return typeof v === 'string' ? esc(v) : `(?:${v.source})`;
  }).join('');
  assert.equal(i, values.length, `as many values as ${JSON.stringify(format)} has conversions`);
  return new RegExp(`^${esc(pre)}${re}$`);
}

const hex = (v: bigint): string => v.toString(16);
/** %p of an address: the hash (16 digits), or the address itself with no_hash_pointers */
const pct_p = (a: bigint, raw = false): string => (raw ? a : hashPointer(a, ptrKey(0n))).toString(16).padStart(16, '0');

// ---------------------------------------------------------------- building and running

const built = new Map<Arch, { out: string } | { missing: string }>();
function samples(t: { skip(msg: string): void }, arch: Arch): { kprobe: string; kretprobe: string; src: { kprobe: string; kretprobe: string } } | undefined {
  if (!existsSync(join(SAMPLES, 'kprobe_example.c'))) {
    unavailable(t, "Linux's samples/kprobes (Debian's linux-source-6.1) are not fetched: run test/modules/linux/fetch-test-kprobes.sh 6.1");
    return undefined;
  }
  let b = built.get(arch);
  if (!b) { b = kbuild(SAMPLES, arch, ['CONFIG_SAMPLE_KPROBES=m', 'CONFIG_SAMPLE_KRETPROBES=m']); built.set(arch, b); }
  if ('missing' in b) { unavailable(t, b.missing); return undefined; }
  return {
    kprobe: builtModule(b.out, 'kprobe_example'), kretprobe: builtModule(b.out, 'kretprobe_example'),
    src: { kprobe: readFileSync(join(SAMPLES, 'kprobe_example.c'), 'utf8'), kretprobe: readFileSync(join(SAMPLES, 'kretprobe_example.c'), 'utf8') },
  };
}

function boot(arch: Arch, cmdline = ''): { m: Machine; log: string[] } {
  const m = new Machine(loadElf(KERNEL(arch)), { cpus: 2 });
  setKernelCmdline(m.kernel, cmdline);
  const log: string[] = [];
  m.onPrintk(r => log.push(r.text));
  return { m, log };
}

function runUntil(m: Machine, cond: () => boolean, what: string, log: readonly string[]): void {
  for (let i = 0; i < 600 && !cond(); i++) {
    const r = m.runSlice(10_000);
    if (r.kind === 'exited' || r.kind === 'limit') break;
  }
  assert.ok(cond(), `never happened: ${what}\n${log.slice(-20).join('\n')}`);
}

/** the symbol's address in the arch's sample kernel (from its ELF symbols) */
function addrOf(arch: Arch, name: string): bigint | undefined {
  return loadElf(KERNEL(arch)).symbols.lookup(name)?.value;
}

/** what kprobe_example's handlers print on `arch` for a hit at `addr` of `sym` */
function handlerLines(src: string, arch: Arch, sym: string, addr: bigint, raw = false): { pre: RegExp; post: RegExp } {
  const [preFmt] = archFormats(src, 'handler_pre', CONFIG[arch]);
  const [postFmt] = archFormats(src, 'handler_post', CONFIG[arch]);
  // the pc the handler sees: x86 after the int3 (regs->ip = addr + 1), arm64 / riscv64 the probed address
  const pc = hex(arch === 'x86_64' ? addr + 1n : addr);
  return {
    pre: line(prefix(src, 'handler_pre'), preFmt, [sym, pct_p(addr, raw), pc, ANY_HEX]),
    post: line(prefix(src, 'handler_post'), postFmt, [sym, pct_p(addr, raw), ANY_HEX]),
  };
}

/** every handler line matches; pre and post alternate on each CPU; at least `min` hits */
function checkHits(lines: readonly string[], want: { pre: RegExp; post: RegExp }, min: number): void {
  const hits = lines.filter(l => /^handler_(pre|post): /.test(l));
  assert.ok(hits.length >= 2 * min, `at least ${min} hits:\n${lines.join('\n')}`);
  for (const l of hits) assert.ok(want.pre.test(l) || want.post.test(l), `${l}\n  is neither\n${want.pre}\n${want.post}`);
  assert.equal(hits.filter(l => want.pre.test(l)).length, hits.filter(l => want.post.test(l)).length, hits.join('\n'));
}

for (const arch of KBUILD_ARCHES) describe(`Linux's samples/kprobes, unmodified (${arch})`, () => {
  test('kprobe_example with --module "kprobe_example.ko symbol=do_fork": the init line and every handler line as Linux prints them', async t => {
    const s = samples(t, arch);
    if (!s) return;
    const addr = addrOf(arch, 'do_fork');
    assert.ok(addr !== undefined);
    const c = captureIo();
    const code = await runCli(['run', KERNEL(arch), '--module', `${s.kprobe} symbol=do_fork`], c.io);
    assert.equal(code, 0, c.stderr());
    const out = c.stdout().split('\n');
    const [, planted] = formats(body(s.src.kprobe, 'kprobe_init'));
    assert.ok(out.some(l => line(prefix(s.src.kprobe, 'kprobe_init'), planted, [pct_p(addr)]).test(l)), `${planted}\n${out.join('\n')}`);
    checkHits(out, handlerLines(s.src.kprobe, arch, 'do_fork', addr), 2);
  });

  test('kprobe-run run --cmdline no_hash_pointers: the planted line and every handler line print the raw address; a command line the kernel cannot take is one error line', async t => {
    const s = samples(t, arch);
    if (!s) return;
    const addr = addrOf(arch, 'do_fork') as bigint;
    const c = captureIo();
    const code = await runCli(['run', KERNEL(arch), '--cmdline', 'quiet no_hash_pointers', '--module', `${s.kprobe} symbol=do_fork`], c.io);
    assert.equal(code, 0, c.stderr());
    const out = c.stdout().split('\n');
    const [, planted] = formats(body(s.src.kprobe, 'kprobe_init'));
    assert.ok(out.some(l => line(prefix(s.src.kprobe, 'kprobe_init'), planted, [pct_p(addr, true)]).test(l)), `${planted}\n${out.join('\n')}`);
    checkHits(out, handlerLines(s.src.kprobe, arch, 'do_fork', addr, true), 2);
    const bad = captureIo();
    assert.notEqual(await runCli(['run', KERNEL(arch), '--cmdline', 'x'.repeat(4096)], bad.io), 0);
    const err = bad.stderr().trim().split('\n');
    assert.equal(err.length, 1, bad.stderr());
    assert.match(err[0], /^kprobe-run: "cmdline" is 4096 bytes; \w+'s COMMAND_LINE_SIZE allows \d+$/);
  });

  test("kprobe_example: no symbol= probes the default (kernel_clone); no_hash_pointers prints raw addresses; rmmod's line", t => {
    const s = samples(t, arch);
    if (!s) return;
    const bytes = new Uint8Array(readFileSync(s.kprobe));
    const [failed, planted] = formats(body(s.src.kprobe, 'kprobe_init'));
    const pre = prefix(s.src.kprobe, 'kprobe_init');
    {
      const { m, log } = boot(arch);
      const mod = m.modules.load(bytes, s.kprobe);
      runUntil(m, () => mod.state === 'live' || mod.state === 'unloaded', 'init', log);
      const clone = addrOf(arch, 'kernel_clone');
      // Linux's default target; register_kprobe's -ENOENT when the kernel has no such function
      if (clone === undefined) assert.ok(log.some(l => line(pre, failed, ['-2']).test(l)), log.join('\n'));
      else assert.ok(log.some(l => line(pre, planted, [pct_p(clone)]).test(l)), log.join('\n'));
    }
    const addr = addrOf(arch, 'do_fork') as bigint;
    const { m, log } = boot(arch, 'no_hash_pointers');
    const mod = m.modules.load(bytes, s.kprobe, ['symbol=do_fork']);
    runUntil(m, () => log.filter(l => l.startsWith('handler_post')).length >= 2, 'two hits', log);
    assert.ok(log.some(l => line(pre, planted, [pct_p(addr, true)]).test(l)), log.join('\n'));
    checkHits(log, handlerLines(s.src.kprobe, arch, 'do_fork', addr, true), 2);
    assert.equal(m.modules.unload(mod.name), undefined);
    runUntil(m, () => !m.modules.get(mod.name), 'rmmod', log);
    const [gone] = formats(body(s.src.kprobe, 'kprobe_exit'));
    assert.ok(log.some(l => line(prefix(s.src.kprobe, 'kprobe_exit'), gone, [pct_p(addr, true)]).test(l)), log.join('\n'));
  });

  test('kretprobe_example func=do_fork: planted; kernel threads have no mm, so the return handler never prints; the exit lines', t => {
    const s = samples(t, arch);
    if (!s) return;
    const addr = addrOf(arch, 'do_fork') as bigint;
    const { m, log } = boot(arch);
    const mod = m.modules.load(new Uint8Array(readFileSync(s.kretprobe)), s.kretprobe, ['func=do_fork']);
    // the sample kernel's workers fork from kernel threads: "forks N" once they have
    runUntil(m, () => log.some(l => / forks [1-9]/.test(l)), 'forks', log);
    const [, planted] = formats(body(s.src.kretprobe, 'kretprobe_init'));
    assert.ok(log.some(l => line('', planted, ['do_fork', pct_p(addr)]).test(l)), log.join('\n'));
    // the kretprobe was hit: its entry handler ran (and returned 1: "Skip kernel threads")
    const rp = m.kprobes.cApi.registered().find(c => c.kp.addr === addr);
    assert.ok(rp && (rp.kp.hits ?? 0) > 0, `the kretprobe on do_fork was hit (${rp?.kp.hits})`);
    const [returned] = formats(body(s.src.kretprobe, 'ret_handler'));
    assert.ok(!log.some(l => line('', returned, ['do_fork', /\d+/, /-?\d+/]).test(l)), `a return handler line for a kernel thread:\n${log.join('\n')}`);
    assert.equal(m.modules.unload(mod.name), undefined);
    runUntil(m, () => !m.modules.get(mod.name), 'rmmod', log);
    const [gone, missed] = formats(body(s.src.kretprobe, 'kretprobe_exit'));
    assert.ok(log.some(l => line('', gone, [pct_p(addr)]).test(l)), log.join('\n'));
    assert.ok(log.some(l => line('', missed, ['0', 'do_fork']).test(l)), log.join('\n'));
  });

  test('busybox insmod kprobe_example.ko symbol=do_fork from user space, then rmmod: the same lines', async t => {
    const s = samples(t, arch);
    if (!s) return;
    const bb = debianBusybox(DEB[arch]);
    if (!bb) { unfetched(t, `Debian's busybox-static (${DEB[arch]}) could not be fetched (offline?): run test/userspace/debian/fetch.sh`); return; }
    const addr = addrOf(arch, 'do_fork') as bigint;
    const root = mkdtempSync(join(tmpdir(), 'kprobe-samples-'));
    try {
      mkdirSync(join(root, 'bin'));
      mkdirSync(join(root, 'lib'));
      copyFileSync(bb, join(root, 'bin', 'busybox'));
      copyFileSync(s.kprobe, join(root, 'lib', 'kprobe_example.ko'));
      const c = captureIo();
      const code = await runCli(['run', KERNEL(arch), '--rootfs', root, '--exec',
        `/bin/busybox sh -c 'insmod /lib/kprobe_example.ko symbol=do_fork; echo rc=$?; lsmod; rmmod kprobe_example; echo rc=$?; `
        + `insmod /lib/kprobe_example.ko symbol=${LONG}; echo rc=$?'`], c.io);
      const out = c.stdout().split('\n');
      assert.equal(code, 0, c.stderr() + out.join('\n'));
      const [, planted] = formats(body(s.src.kprobe, 'kprobe_init'));
      const [gone] = formats(body(s.src.kprobe, 'kprobe_exit'));
      const at = (re: RegExp): number => out.findIndex(l => re.test(l));
      const plantedAt = at(line(prefix(s.src.kprobe, 'kprobe_init'), planted, [pct_p(addr)]));
      const goneAt = at(line(prefix(s.src.kprobe, 'kprobe_exit'), gone, [pct_p(addr)]));
      assert.ok(plantedAt >= 0 && goneAt > plantedAt, out.join('\n'));
      assert.ok(out.indexOf('rc=0') > plantedAt && out.lastIndexOf('rc=0') > goneAt, out.join('\n'));
      assert.ok(out.some(l => /^kprobe_example +\d+ +0 *$/.test(l)), `lsmod lists it by its .modinfo name:\n${out.join('\n')}`);
      // a symbol longer than KSYM_NAME_LEN - 1: param_set_copystring's and parse_args' lines, insmod fails with ENOSPC (28)
      const tooLong = [`symbol: string doesn't fit in ${KSYM_NAME_LEN - 1} chars.`, `kprobe_example: \`${LONG}' too large for parameter \`symbol'`,
        "insmod: can't insert '/lib/kprobe_example.ko': No space left on device", 'rc=28'];
      for (const l of tooLong) assert.ok(out.slice(goneAt).includes(l), `${l}\n${out.slice(goneAt).join('\n')}`);
      // the loader printed the parameter's failure itself: every copy in the log is Linux's line, none with an errno suffix
      // (busybox tries finit_module, then init_module: Linux logs the pair once per attempt)
      assert.deepEqual([...new Set(out.filter(l => l.includes('too large for parameter')))], [tooLong[1]], out.slice(goneAt).join('\n'));
      const hits = out.slice(plantedAt, goneAt);
      const want = handlerLines(s.src.kprobe, arch, 'do_fork', addr);
      for (const l of hits.filter(x => /^handler_(pre|post): /.test(x))) assert.ok(want.pre.test(l) || want.post.test(l), l);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
