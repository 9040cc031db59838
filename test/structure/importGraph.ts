/**
 * The project's import graph, read from the source text: every relative
 * import, re-export and require of the TypeScript files under a set of
 * top-level folders, resolved to repository-relative paths, each marked
 * type-only or not. Shared by the layering test (its rules) and by
 * importReport.ts (the figures: imports between folders, cycles).
 */
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

export interface ImportEdge {
  from: string;
  /** Repository-relative path of the imported file, or the bare specifier of a package. */
  to: string;
  spec: string;
  /** `import type` / `export type`, or every named import marked `type`. */
  typeOnly: boolean;
}

export function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) tsFiles(p, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

/** The file's imports: specifier and whether only types are taken. */
export function importsOf(file: string): { spec: string; typeOnly: boolean }[] {
  const src = readFileSync(file, 'utf8');
  const out: { spec: string; typeOnly: boolean }[] = [];
  const re = /(?:^|\n)\s*(import|export)\s([^;]*?)\sfrom\s+'([^']+)'|(?:^|\n)\s*import\s+'([^']+)'|require\('([^']+)'\)/g;
  for (let m; (m = re.exec(src)) !== null;) {
    if (m[3] !== undefined) {
      const clause = m[2].trim();
      let typeOnly = /^type\s/.test(clause);
      const braces = /^\{([^}]*)\}$/.exec(clause);
      if (!typeOnly && braces) {
        const names = braces[1].split(',').map(s => s.trim()).filter(Boolean);
        typeOnly = names.length > 0 && names.every(n => n.startsWith('type '));
      }
      out.push({ spec: m[3], typeOnly });
    } else out.push({ spec: m[4] ?? m[5], typeOnly: false });
  }
  return out;
}

/** Repository-relative path (posix) of a relative specifier resolved from a file, or the bare specifier. */
export function resolveSpec(root: string, file: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  const abs = resolve(dirname(file), spec);
  const found = [abs + '.ts', join(abs, 'index.ts'), abs].find(p => existsSync(p) && statSync(p).isFile()) ?? abs;
  return relative(root, found).split(sep).join('/');
}

/**
 * The files a compiled file loads at run time: the relative require()s of
 * `out/<file>.js`, mapped back to the source paths. TypeScript drops an
 * import whose names are only used as types, so this tells a value import
 * from a type-only one however the import is written. Undefined when the
 * file has not been compiled.
 */
export function runtimeImports(root: string, srcRel: string, outDir = 'out'): Set<string> | undefined {
  const js = join(root, outDir, srcRel.replace(/\.ts$/, '.js'));
  if (!existsSync(js)) return undefined;
  const out = new Set<string>();
  const re = /require\("(\.[^"]+)"\)/g;
  const src = readFileSync(js, 'utf8');
  for (let m; (m = re.exec(src)) !== null;) {
    const abs = resolve(dirname(join(root, srcRel)), m[1]);
    const found = [abs + '.ts', join(abs, 'index.ts'), abs].find(p => existsSync(p) && statSync(p).isFile()) ?? abs;
    out.add(relative(root, found).split(sep).join('/'));
  }
  return out;
}

/**
 * Every import of the TypeScript files under `dirs`. `typeOnly` is taken
 * from the compiled output where there is one (see runtimeImports), else
 * from the import's form.
 */
export function importEdges(root: string, dirs: readonly string[]): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const d of dirs) {
    for (const abs of tsFiles(join(root, d))) {
      const from = relative(root, abs).split(sep).join('/');
      const loaded = runtimeImports(root, from);
      for (const i of importsOf(abs)) {
        const to = resolveSpec(root, abs, i.spec);
        const typeOnly = loaded && i.spec.startsWith('.') ? !loaded.has(to) : i.typeOnly;
        edges.push({ from, to, spec: i.spec, typeOnly });
      }
    }
  }
  return edges;
}

/** Strongly connected components of more than one file (Tarjan), biggest first. */
export function cycles(edges: readonly ImportEdge[], opts: { withTypes: boolean }): string[][] {
  const adj = new Map<string, string[]>();
  for (const e of edges) {
    if (!opts.withTypes && e.typeOnly) continue;
    if (!e.to.includes('/')) continue;
    (adj.get(e.from) ?? adj.set(e.from, []).get(e.from)!).push(e.to);
  }
  let index = 0;
  const idx = new Map<string, number>(), low = new Map<string, number>(), on = new Set<string>();
  const stack: string[] = [], out: string[][] = [];
  const visit = (v: string): void => {
    idx.set(v, index); low.set(v, index); index++;
    stack.push(v); on.add(v);
    for (const w of adj.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v)!, low.get(w)!)); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const comp: string[] = [];
      for (let w = stack.pop()!; ; w = stack.pop()!) { on.delete(w); comp.push(w); if (w === v) break; }
      if (comp.length > 1) out.push(comp.sort());
    }
  };
  for (const v of [...adj.keys()].sort()) if (!idx.has(v)) visit(v);
  return out.sort((a, b) => b.length - a.length || a[0].localeCompare(b[0]));
}

/**
 * The folder a file counts in for ranks: `emulator/<folder>` (a file directly
 * in emulator/ is its own unit), `adapter`, `extension`.
 */
export function unitOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] !== 'emulator') return parts[0];
  if (parts.length === 2) return path;
  return `emulator/${parts[1]}`;
}
