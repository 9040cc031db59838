// Where a probe hit's host time goes, part by part (issue 36 item 11): the
// overhead section's modes on bench.elf (x86_64, translator on), measured with
// builds that each leave out one more part of the hit path. The builds are
// measurement-only: each is a bundle of scripts/bench/lib/overheadParts.ts made
// here with text edits applied to the sources at bundle time (an esbuild
// plugin; the tree is not touched), so the product code carries no switch for
// them. An edit whose text is not found exactly once fails the run: when the
// code moves on, the edits must be updated with it.
//
// The optimized kprobe (o) ladder, each rung the one before it plus one part:
//   transitions  the jumps into the detour buffer and back, and its copied instructions
//   save         + the register save translated code writes before the native entry's int3
//   call         + the call out of translated code to the helper import (it returns at once)
//   helper       + the translator's generic helper (flag record sync, instruction count, checks)
//   envelope     + the trap envelope (asTrap: clock, optimizer poll, run-state checks) and the route
//   frame        + the fused native hit's flags save and frame restore, without the handlers
//   nolog        + the handlers (control block, hit count, pre_handler), without the hit-log record
//   full         + the hit-log record: the real build
// and for every mode, `nolog` (no hit-log record of plain kprobe hits) and,
// for the kretprobe booster's return (rb, rt), `kretframe` (no flags save and
// frame restore in JS on the booster's fused return).
//
//   node scripts/bench/overheadParts.mjs [ITER=3] [MACHINES=12] [CPU]
//   node scripts/bench/overheadParts.mjs --check    (the edits apply; nothing is built)
// ITER interleaved passes over every (build, mode); each process runs MACHINES
// machines (the first two not counted); CPU pins every process to that core
// (taskset) when given. Prints per (build, mode) the median over the passes of
// (CPU ns of the mode - CPU ns of the probe-less run) / calls, with the
// passes' min..max: V8's compile decisions differ from process to process, and
// a part's figure moves by tens of ns between passes (more passes: steadier). Not a bench
// section (bench.mjs runs the .ts files only).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const check = process.argv.includes('--check');
const [iter = '3', machines = '12', cpu] = process.argv.slice(2).filter(a => a !== '--check');

/** one edit: in the file ending with `file`, the text `find` (exactly once) becomes `to` */
const E = (file, find, to) => ({ file, find, to });
const JIT = 'emulator/arch/x86_64/jit.ts', TR = 'emulator/jit/translator.ts', TRAPS = 'emulator/kprobes/traps.ts';
const FRAME = 'emulator/arch/x86_64/kprobes/nativeFrame.ts', HITS = 'emulator/kprobes/hitPath.ts';
/** the optprobe native entry's resume address, from the CPU's save layout (X86Cpu.nativeSave.optResume) */
const RESUME = '(cpu as unknown as { nativeSave: { optResume: number } }).nativeSave.optResume';
const EDITS = {
  full: [],
  transitions: [E(JIT, `  e.stm(frame, vs);
  if (opt) {
    const resume = i.addr + S.optResume;
    b.helper(savedFrameInt3(i, route), resume);`, `  if (!opt) e.stm(frame, vs);
  if (opt) {
    const resume = i.addr + S.optResume;`)],
  save: [E(JIT, `    b.helper(savedFrameInt3(i, route), resume);
    b.jmp(resume);`, `    b.jmp(resume);`)],
  call: [E(TR, `    const insn = unit.helpers[index];
`, `    const insn = unit.helpers[index];
    if ((insn as unknown as { route?: { kind: string } }).route?.kind === 'optprobe') return 0;
`)],
  helper: [E(JIT, `function int3FrameSaved(cpu: X86Cpu, i: Insn): void {
`, `function int3FrameSaved(cpu: X86Cpu, i: Insn): void {
  if ((i as SavedFrameInt3).route.kind === 'optprobe') { cpu.rip = i.addr + ${RESUME}; return; }
`)],
  envelope: [E(TRAPS, `      if (oneCall && (fused as FusedNativeRoute).fused(`, `      if (oneCall && (fused as FusedNativeRoute).kind === 'optprobe') (cpu as unknown as { rip: number }).rip = (at as number) + ${RESUME};
      else if (oneCall && (fused as FusedNativeRoute).fused(`)],
  frame: [E(FRAME, `      body.runHandlers();
    } finally {`, `    } finally {`)],
  nolog: [E(HITS, `      this.logHit(p, regs.cpu.id);
    }
    const pre`, `    }
    const pre`)],
  kretframe: [E(FRAME, `  saveFlags(cpu, w, i, true);
  const entry`, `  if (opt) saveFlags(cpu, w, i, true);
  const entry`), E(FRAME, `  if (typeof to === 'number') {
    restoreSlots(cpu, kind, r, i, spLo, spHi, lo32(to), hi32(to));`, `  if (typeof to === 'number') {`)],
};
/** the (build, modes) measured; `none` (the baseline) runs with the full build */
const PLAN = [
  ['full', ['none', 'k', 'b', 'o', 'r', 'rk', 'rt', 'rb', 'ro']],
  ['nolog', ['k', 'b', 'o']],
  ['frame', ['o']], ['envelope', ['o']], ['helper', ['o']], ['call', ['o']], ['save', ['o']], ['transitions', ['o']],
  ['kretframe', ['rt', 'rb']],
];

/** the edit's file with the edit applied; throws when its text is not found exactly once */
function applyEdit(name, e, text) {
  const at = text.indexOf(e.find);
  if (at < 0 || text.indexOf(e.find, at + 1) >= 0) throw new Error(`overheadParts: build ${name}: the edit's text is not found exactly once in ${e.file}: ${JSON.stringify(e.find.slice(0, 80))}`);
  return text.slice(0, at) + e.to + text.slice(at + e.find.length);
}

if (check) {
  // --check: every build's edits apply to the sources as they are (test/kprobes/overheadParts.test.ts), nothing is built or run
  for (const [name] of PLAN) {
    const texts = new Map();
    for (const e of EDITS[name]) texts.set(e.file, applyEdit(name, e, texts.get(e.file) ?? readFileSync(join(root, e.file), 'utf8')));
    console.log(`${name}: ${EDITS[name].length} edit(s) apply`);
  }
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'overhead-parts-'));
try {
  const bundles = {};
  for (const [name] of PLAN) {
    const edits = EDITS[name];
    const used = new Set();
    const outfile = join(dir, `${name}.js`);
    await build({
      entryPoints: [join(root, 'scripts', 'bench', 'lib', 'overheadParts.ts')], bundle: true, platform: 'node', target: 'node20', format: 'cjs',
      external: ['vscode'], outfile, logLevel: 'error',
      plugins: [{
        name: 'measurement-edits',
        setup(b) {
          b.onLoad({ filter: /\.ts$/ }, args => {
            const mine = edits.filter(e => args.path.endsWith(e.file));
            if (mine.length === 0) return undefined;
            let text = readFileSync(args.path, 'utf8');
            for (const e of mine) {
              text = applyEdit(name, e, text);
              used.add(e);
            }
            return { contents: text, loader: 'ts' };
          });
        },
      }],
    });
    if (used.size !== edits.length) throw new Error(`overheadParts: build ${name}: an edit's file was not in the bundle`);
    bundles[name] = outfile;
  }
  const runs = PLAN.flatMap(([name, modes]) => modes.map(mode => ({ name, mode })));
  const median = xs => { const s = [...xs].sort((a, b) => a - b), h = s.length >> 1; return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2; };
  const cmd = cpu === undefined ? [process.execPath] : ['taskset', '-c', cpu, process.execPath];
  const figures = new Map();
  const baseline = [];
  for (let i = 0; i < Number(iter); i++) {
    const order = i % 2 ? [...runs].reverse() : runs;
    const cpuOf = new Map();
    for (const { name, mode } of order) {
      const r = spawnSync(cmd[0], [...cmd.slice(1), bundles[name], `--mode=${mode}`, `--machines=${machines}`], { cwd: root, encoding: 'utf8', maxBuffer: 1 << 24 });
      const line = (r.stdout ?? '').split('\n').find(l => l.startsWith('overhead-parts:'));
      if (r.status !== 0 || line === undefined) throw new Error(`overheadParts: ${name} ${mode} failed (exit ${r.status ?? r.signal}): ${(r.stderr ?? '').slice(0, 2000)}`);
      const o = JSON.parse(line.slice('overhead-parts:'.length));
      if (name === 'full' && mode !== 'none' && o.hits !== o.calls) throw new Error(`overheadParts: full ${mode}: ${o.hits} hits for ${o.calls} calls`);
      cpuOf.set(`${name} ${mode}`, { ns: median(o.cpuNs), calls: o.calls });
    }
    const base = cpuOf.get('full none');
    baseline.push(base.ns / base.calls);
    const pass = [];
    for (const [key, v] of cpuOf) {
      if (key === 'full none') continue;
      const net = (v.ns - base.ns) / v.calls;
      if (!figures.has(key)) figures.set(key, []);
      figures.get(key).push(net);
      pass.push(`${key} ${net.toFixed(0)}`);
    }
    console.log(`pass ${i}: ${pass.join('  ')}`);
  }
  console.log(`\nCPU ns per hit net of the probe-less run (${median(baseline).toFixed(0)} ns per call of the loop), median of ${iter} passes, ${machines - 2} machines each:`);
  for (const [key, xs] of figures) console.log(`  ${key.padEnd(18)} ${median(xs).toFixed(0).padStart(5)}  [${Math.min(...xs).toFixed(0)}..${Math.max(...xs).toFixed(0)}]`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
