/**
 * Source level on Debian's own kernel: the DWARF reader on the real vmlinux
 * of linux-image-<release>-dbg (test/linux/dbg/fetch-vmlinux-dbg.sh), in a
 * fresh process, step by step as the debugger meets it: opening the image
 * (ELF headers, sections, symbols), the function `do_sys_openat2` by name
 * (symbol) and its DWARF ranges, its entry address -> file:line (the first
 * line-table query), that fs/open.c line -> addresses (a source breakpoint),
 * the parameters and locals with their C types at the entry (the frame's
 * Variables), a struct and a global by name (what views of the guest's
 * kprobes read: struct kprobe, kprobe_table; the name index they need is read
 * from the disk cache when an earlier session saved it), a line of a header most units include (include/linux/fs.h:
 * the worst case of a source breakpoint, every such unit's line program
 * runs), and the heap and peak RSS afterwards. Without the vmlinux the
 * section says how to fetch it.
 *
 * Then the views of the guest's own state (emulator/system/guest/): Debian's
 * kernel booted (acpi=off, one CPU) with 100 kprobe events defined in the
 * guest on distinct functions, and the time one refresh takes (modules,
 * every kprobe in kprobe_table, the trace events with their hit counts, the
 * uprobes, all read from guest memory): the first (it builds the DWARF type
 * index) and the following ones.
 *
 * Then the debugger's way to its first stop (emulator/debug LinuxTarget, as
 * the adapter launches it): Debian's kernel from power-on to a breakpoint
 * on do_sys_openat2 (the guest cannot see it: a debug-unit slot), the
 * thread name at the stop (current->comm through the DWARF layout), and
 * the frames with their variables; with the peak RSS. `--quick` leaves both
 * boots out.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { loadElf } from '../../emulator/elf';
import { debugInfoOf } from '../../emulator/elf/dwarf/info';
import { globalDie, namesAt, outermostFunction } from '../../emulator/elf/dwarf/scopes';
import { typeNamed } from '../../emulator/elf/dwarf/ctype';
import { typeText } from '../../emulator/elf/dwarf/typeDies';
import { nameIndexCachePath } from '../../emulator/elf/dwarf/nameIndexCache';
import { repoRoot } from './lib/root';
import { GuestKernel } from '../../emulator/system/guest/guestKernel';
import { runConsoleSteps } from '../../emulator/system/guest/consoleSteps';
import { launchLinuxTarget } from '../../emulator/debug/index';
import type { LinuxStop } from '../../emulator/debug/index';

const root = repoRoot('linuxDebug');
const path = join(root, 'test', 'linux', 'dbg', 'cache', 'vmlinux');
const gc = (globalThis as { gc?: () => void }).gc;
const heap = (): number => { for (let i = 0; i < 4; i++) gc?.(); return process.memoryUsage().heapUsed; };
const mb = (b: number): string => `${(b / 1048576).toFixed(0)} MB`;
const ms = (t: number): string => `${t.toFixed(0)} ms`;
const hex = (a: bigint): string => '0x' + a.toString(16);
const fn = 'do_sys_openat2';

/** the vmlinux opened by the steps above (its DWARF indexes built), reused by the guest views below */
let opened: ReturnType<typeof loadElf> | undefined;
if (!existsSync(path)) {
  console.log(`no ${path}: run test/linux/fetch-kernel.sh then test/linux/dbg/fetch-vmlinux-dbg.sh`);
} else {
  const step = <T>(what: string, f: () => T, show: (v: T) => string): T => {
    const t0 = performance.now();
    const v = f();
    console.log(`${what.padEnd(44)} ${ms(performance.now() - t0).padStart(8)}   ${show(v)}`);
    return v;
  };
  const t0 = performance.now();
  const image = opened = step('open (ELF, sections, symbols)', () => loadElf(path), i => `${i.symbols.count} symbols, ${i.sections.length} sections`);
  const sym = step(`symbol ${fn}`, () => image.symbols.lookup(fn), s => s ? `${hex(s.value)} size ${s.size}` : 'not found');
  if (!sym) throw new Error(`${path}: no symbol ${fn}`);
  const pos = step(`first line lookup: ${hex(sym.value)} -> file:line`, () => image.lines?.lineForAddress(sym.value), l => l ? `${l.file}:${l.line}` : 'none');
  const tFirst = performance.now() - t0;
  if (pos) step(`fs/open.c:${pos.line} -> addresses`, () => image.lines?.addressesForLine('fs/open.c', pos.line) ?? [], a => a.map(hex).join(' '));
  const di = debugInfoOf(image);
  step(`DWARF function ${fn}: ranges`, () => {
    const u = di.unitFor(sym.value);
    const r = u ? di.root(u) : null;
    const f = r ? outermostFunction(di, r, sym.value) : undefined;
    return f ? di.ranges(f) : [];
  }, r => r.map(([lo, hi]) => `[${hex(lo)}, ${hex(hi)})`).join(' ') || 'none');
  step(`frame names at the entry with types`, () => namesAt(image, sym.value), n => n
    ? [...n.names.values()].map(v => `${v.kind === 'param' ? '' : 'local '}${typeText(n.di, v.type)} ${v.name}`).join(', ')
    : 'none');
  const saved = nameIndexCachePath(di.infoBytes);
  const fromDisk = saved !== null && existsSync(saved);
  step('struct kprobe by name (index over every unit)', () => typeNamed(image, 'struct', 'kprobe'), t => (t?.kind === 'struct' ? `${t.size} bytes, ${t.members().length} members` : 'not found')
    + (fromDisk ? ' (name index read from the disk cache)' : saved ? ' (name index built, saved for the next session)' : ''));
  step('global kprobe_table by name', () => globalDie(image, 'kprobe_table'), g => g ? `DIE 0x${g.die.offset.toString(16)}` : 'not found');
  const rssFirst = process.resourceUsage().maxRSS * 1024;
  step('include/linux/fs.h:1 -> next line with code', () => image.lines?.nextLineWithCode('include/linux/fs.h', 1), l => `line ${l}`);
  console.log(`${'open + first line lookup'.padEnd(44)} ${ms(tFirst).padStart(8)}`);
  console.log(`${'heap after the lookups'.padEnd(44)} ${mb(heap()).padStart(8)}   ${gc ? 'after GC' : 'approximate (no --expose-gc)'}`);
  console.log(`${'peak RSS before the fs.h query'.padEnd(44)} ${mb(rssFirst).padStart(8)}`);
  console.log(`${'peak RSS'.padEnd(44)} ${mb(process.resourceUsage().maxRSS * 1024).padStart(8)}   (vmlinux file ${mb(statSync(path).size)}; bytes not read: ${mb(image.sections.filter(s => s.size > 0n && s.data.length === 0 && s.type !== 8).reduce((n, s) => n + Number(s.size), 0))} of relocations for debug sections)`);
}

/** 100 kprobe events on distinct functions: the first that accept a probe past their ftrace call (+5, else +9) */
const DEFINE_100 = 'i=0; for f in $(grep -v "\\[" /sys/kernel/tracing/available_filter_functions | head -n 600); do [ $i -ge 100 ] && break; '
  + 'for o in 5 9; do if echo "p:b$i $f+$o" >> /sys/kernel/tracing/kprobe_events 2>/dev/null; then i=$((i+1)); break; fi; done; done; echo defined $i';

const vmlinuxPath = path;
const kernelPath = join(root, 'test', 'linux', 'cache', 'vmlinuz'), initrdPath = join(root, 'test', 'linux', 'cache', 'initramfs.cpio.gz');
if (process.argv.includes('--quick')) console.log('guest views with 100 kprobes: skipped (--quick)');
else if (!existsSync(vmlinuxPath) || !existsSync(kernelPath) || !existsSync(initrdPath)) console.log('guest views: no Debian kernel / initramfs / vmlinux (test/linux/fetch-kernel.sh, make-initramfs.sh, dbg/fetch-vmlinux-dbg.sh)');
else {
  // the same image as above: its DWARF type index is built already (the first refresh below then reads only guest memory)
  const vmlinux = opened ?? loadElf(vmlinuxPath);
  const file = (p: string): { name: string; data: Uint8Array } => ({ name: p, data: new Uint8Array(readFileSync(p)) });
  const t0 = performance.now();
  let defined = '', listed = 0;
  const times: number[] = [];
  let rows = 0;
  const r = runConsoleSteps({
    kernel: file(kernelPath), initrd: file(initrdPath), cmdline: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, acpi: false, memoryMiB: 256,
    maxInstructions: 40_000_000_000,
    steps: [
      { input: DEFINE_100, then: out => { defined = /defined \d+/.exec(out)?.[0] ?? out.trim(); } },
      { input: 'grep -c . /sys/kernel/debug/kprobes/list', then: out => { listed = Number(out.trim()); } },
      {
        input: 'true',
        then: (_, run) => {
          const g = new GuestKernel(vmlinux, run.machine.memory);
          for (let i = 0; i < 6; i++) {
            const t = performance.now();
            const s = g.snapshot();
            times.push(performance.now() - t);
            rows = s.kprobes.length;
            if (s.render.kprobesList.split('\n').length - 1 !== listed) throw new Error(`the reader lists ${rows} kprobes, the guest ${listed}`);
          }
        },
      },
    ],
  });
  if (r.stop.kind !== 'done') console.log(`guest views: the session stopped: ${r.stop.kind} ${r.stop.detail}`);
  else {
    console.log(`${'boot + 100 kprobe events (guest)'.padEnd(44)} ${ms(performance.now() - t0).padStart(8)}   ${defined}, ${r.instructions} instructions`);
    console.log(`${'first view refresh (finds the kernel, layouts)'.padEnd(44)} ${ms(times[0]).padStart(8)}   ${rows} kprobes = the guest's list`);
    const rest = times.slice(1).sort((a, b) => a - b);
    console.log(`${'view refresh with 100 guest kprobes'.padEnd(44)} ${ms(rest[rest.length >> 1]).padStart(8)}   median of ${rest.length} (min ${rest[0].toFixed(1)} ms)`);
  }
}

/** the debugger's first stop: power-on to a breakpoint on do_sys_openat2 (the kernel's first open, of /init) */
async function firstStop(): Promise<void> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const t = launchLinuxTarget({ kernel: kernelPath, initrd: initrdPath, vmlinux: vmlinuxPath, append: 'console=ttyS0 nokaslr panic=-1 acpi=off', cpus: 1, memory: 256 });
  const tLaunch = performance.now() - t0;
  const addr = t.functionAddress(fn);
  if (typeof addr === 'string') throw new Error(addr);
  t.setBreakpoints('function', 'function', [{ addresses: [addr], label: fn }]);
  const stop = await new Promise<LinuxStop | string>(resolve => {
    t.setRunListeners(s => resolve(s), e => resolve(`${e.kind}: ${e.detail}`));
    t.resume();
  });
  if (typeof stop === 'string') { console.log(`first stop: the machine ended: ${stop}`); return; }
  const tStop = performance.now() - t0;
  const cpuUsed = process.cpuUsage(cpu0);
  let s = performance.now();
  const name = t.threadName(stop.cpu);
  const tName = performance.now() - s;
  s = performance.now();
  const frames = t.frames(stop.cpu);
  const vars = t.frameVariables(stop.cpu, 0);
  const tVars = performance.now() - s;
  console.log(`${'launch (vmlinux opened, machine built)'.padEnd(44)} ${ms(tLaunch).padStart(8)}`);
  console.log(`${`time to the first stop (${fn})`.padEnd(44)} ${ms(tStop).padStart(8)}   ${t.run.instructions} instructions, CPU ${((cpuUsed.user + cpuUsed.system) / 1e6).toFixed(1)} s (${stop.description})`);
  console.log(`${'thread name at the stop (DWARF layout)'.padEnd(44)} ${ms(tName).padStart(8)}   ${name}`);
  console.log(`${'frames + variables at the stop'.padEnd(44)} ${ms(tVars).padStart(8)}   ${frames.length} frames; ${vars.ok ? [...vars.params, ...vars.locals].map(v => `${v.name}=${v.value}`).join(', ') : vars.reason}`);
  console.log(`${'peak RSS (the whole bench so far)'.padEnd(44)} ${mb(process.resourceUsage().maxRSS * 1024).padStart(8)}`);
  t.dispose();
}

if (!process.argv.includes('--quick') && existsSync(vmlinuxPath) && existsSync(kernelPath) && existsSync(initrdPath)) {
  firstStop().catch(e => { console.log(`first stop: ${(e as Error).message}`); process.exitCode = 1; });
}
