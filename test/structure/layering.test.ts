/**
 * The layering the design guide describes, checked on the source: emulator/
 * never imports vscode, adapter/ or extension/; arch-neutral emulator code
 * never imports an architecture's implementation (only a port's info part,
 * through emulator/ports.ts); the only place that loads implementations is
 * emulator/arch/registry.ts; the layers only point down (test/structure/
 * ranks.ts); the adapter's one door into the machine is
 * emulator/debug/index.ts; the language server's bundle holds exactly the
 * emulator files listed below and no interpreter, nor does the extension's
 * (esbuild's metafile of the real entry points).
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { build } from 'esbuild';
import { repoPath, repoRoot } from '../util/paths';
import { PORTS } from '../../emulator/ports';
import { implementedPortNames } from '../../emulator/arch/registry';
import { importEdges } from './importGraph';
import { layerOf, rankViolations } from './ranks';

const ROOT = repoRoot();

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** Module specifiers of a file's imports, re-exports and requires. */
function specifiers(file: string): string[] {
  const src = readFileSync(file, 'utf8');
  const out: string[] = [];
  const re = /(?:^|\n)\s*(?:import|export)\s[^;]*?\sfrom\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|require\('([^']+)'\)/g;
  for (let m; (m = re.exec(src)) !== null;) out.push(m[1] ?? m[2] ?? m[3]);
  return out;
}

/** Repository-relative path (posix) of a relative specifier resolved from a file, or the bare specifier. */
function resolveSpec(file: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  const abs = resolve(dirname(file), spec);
  const withTs = [abs + '.ts', join(abs, 'index.ts'), abs].find(p => existsSync(p)) ?? abs;
  return relative(ROOT, withTs).split(sep).join('/');
}

const archDirs = PORTS.map(p => `emulator/arch/${p.name}/`);
const archOf = (path: string): string | undefined => archDirs.find(d => path.startsWith(d));

describe('layering', () => {
  const files = tsFiles(repoPath('emulator')).map(f => ({ abs: f, rel: relative(ROOT, f).split(sep).join('/') }));

  test('emulator/ imports neither vscode nor adapter/ nor extension/', () => {
    const bad: string[] = [];
    for (const f of files) {
      for (const s of specifiers(f.abs)) {
        const r = resolveSpec(f.abs, s);
        if (r === 'vscode' || r.startsWith('adapter/') || r.startsWith('extension/')) bad.push(`${f.rel} -> ${s}`);
      }
    }
    assert.deepEqual(bad, []);
  });

  test('arch-neutral emulator code imports no architecture implementation (only ports\' info parts)', () => {
    const bad: string[] = [];
    let checked = 0;
    for (const f of files) {
      if (archOf(f.rel) || f.rel === 'emulator/arch/registry.ts') continue;
      for (const s of specifiers(f.abs)) {
        const r = resolveSpec(f.abs, s);
        const a = archOf(r);
        checked++;
        if (a && r !== `${a}info.ts`) bad.push(`${f.rel} -> ${s}`);
      }
    }
    assert.ok(checked > 100, `only ${checked} imports seen: the scanner is broken`);
    assert.deepEqual(bad, []);
  });

  test('one architecture\'s folder imports no other architecture\'s folder', () => {
    const bad: string[] = [];
    for (const f of files) {
      const mine = archOf(f.rel);
      if (!mine) continue;
      for (const s of specifiers(f.abs)) {
        const a = archOf(resolveSpec(f.abs, s));
        if (a && a !== mine) bad.push(`${f.rel} -> ${s}`);
      }
    }
    assert.deepEqual(bad, []);
  });

  test('the ports with a CPU are exactly the ones the registry can load', () => {
    assert.deepEqual(PORTS.filter(p => p.hasCpu).map(p => p.name).sort(), implementedPortNames().sort());
    const names = PORTS.flatMap(p => [p.name, ...p.aliases]);
    assert.equal(new Set(names).size, names.length, 'port names and aliases are unique');
    for (const p of PORTS) {
      const n = p.regs.length;
      for (const i of [...p.abi.argRegs, p.abi.retReg, p.abi.spReg, p.abi.pcReg, p.abi.fpReg]) assert.ok(i >= 0 && i < n, `${p.name}: register index ${i}`);
      assert.ok(existsSync(repoPath('emulator', 'arch', p.name, 'info.ts')), `${p.name} has an info part`);
    }
  });

  for (const [label, entry] of [['language server', ['extension', 'languageServer', 'server.ts']], ['extension', ['extension', 'extension.ts']]] as const) {
    test(`the ${label} bundle contains no CPU, decoder or kprobes engine`, async () => {
      const r = await build({
        entryPoints: [repoPath(...entry)], bundle: true, platform: 'node', target: 'node20',
        format: 'cjs', external: ['vscode'], write: false, metafile: true, logLevel: 'silent', absWorkingDir: ROOT,
      });
      const inputs = Object.keys(r.metafile.inputs);
      const impl = inputs.filter(i => (archOf(i) && !/\/(info|regs)\.ts$/.test(i)) || i.startsWith('emulator/cpu/') || i.startsWith('emulator/kprobes/'));
      assert.deepEqual(impl, []);
      assert.ok(inputs.includes('emulator/ports.ts'), `the ${label} reads the ports' info parts`);
    });
  }

  const edges = importEdges(ROOT, ['adapter', 'extension', 'emulator']);

  test('every emulator file belongs to a ranked layer, and layers import only lower ranks (type-only: interfaces too)', () => {
    const unranked = files.map(f => f.rel).filter(f => { try { return layerOf(f) === undefined; } catch { return true; } });
    assert.deepEqual(unranked, []);
    assert.deepEqual(rankViolations(edges), []);
  });

  test('the rank check catches an import that points up (a deliberately wrong edge)', () => {
    const wrong = [
      { from: 'emulator/kernel/kernel.ts', to: 'emulator/probes/manager.ts', spec: '../probes/manager', typeOnly: false },
      { from: 'emulator/memory/memory.ts', to: 'emulator/timetravel/recorder.ts', spec: '../timetravel/recorder', typeOnly: true },
      { from: 'emulator/kprobes/core.ts', to: 'emulator/arch/types.ts', spec: '../arch/types', typeOnly: true },
    ];
    assert.deepEqual(rankViolations(wrong), [
      'emulator/kernel/kernel.ts -> emulator/probes/manager.ts (kernel -> probes)',
      'emulator/memory/memory.ts -> emulator/timetravel/recorder.ts (memory -> timetravel, type-only)',
    ]);
  });

  test('the adapter reaches the machine only through emulator/debug/index.ts (other emulator imports are type-only)', () => {
    const bad = edges.filter(e => e.from.startsWith('adapter/') && e.to.startsWith('emulator/') && !e.typeOnly && e.to !== 'emulator/debug/index.ts')
      .map(e => `${e.from} -> ${e.to}`);
    assert.ok(edges.some(e => e.from.startsWith('adapter/') && e.to === 'emulator/debug/index.ts'), 'the adapter uses the door');
    assert.deepEqual(bad, []);
  });

  test('the language server bundle holds exactly the emulator files it is allowed', async () => {
    const r = await build({
      entryPoints: [repoPath('extension', 'languageServer', 'server.ts')], bundle: true, platform: 'node', target: 'node20',
      format: 'cjs', external: ['vscode'], write: false, metafile: true, logLevel: 'silent', absWorkingDir: ROOT,
    });
    const inputs = Object.keys(r.metafile.inputs).filter(i => i.startsWith('emulator/')).sort();
    const allowed = (i: string): boolean => LANGUAGE_SERVER_EMULATOR.some(a => a.endsWith('/') ? i.startsWith(a) : i === a);
    assert.deepEqual(inputs.filter(i => !allowed(i)), []);
  });
});

/**
 * What the language server may bundle from emulator/: the ports' info parts
 * and ABI facts; the handler language; ELF and DWARF (with the .ko reader
 * for module symbols); the kprobe_events parser; the probe-target parser
 * and the program-name binding the handler checker shares with the runtime,
 * with the CFI unwinder that binding reads frame bases from. No CPU, kernel,
 * kprobes engine, probe manager or debugger. emulator/README.md points here.
 */
const LANGUAGE_SERVER_EMULATOR: readonly string[] = [
  'emulator/ports.ts', 'emulator/arch/types.ts', 'emulator/arch/abiFacts.ts', 'emulator/arch/archKernel.ts', 'emulator/arch/syscallNumbers.ts',
  ...PORTS.flatMap(p => [`emulator/arch/${p.name}/info.ts`, `emulator/arch/${p.name}/regs.ts`]),
  'emulator/handlers/', 'emulator/elf/', 'emulator/memory/address.ts', 'emulator/kernel/modules/object.ts',
  'emulator/tracing/events/', 'emulator/probes/targets.ts', 'emulator/probes/programNames.ts', 'emulator/unwind/',
];
