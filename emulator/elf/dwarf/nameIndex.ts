/**
 * The program's top-level names over every unit (types by `struct NAME` /
 * `union` / `enum` / `typedef`, global and file-static variables), built in
 * one pass that reads only the units' top-level DIEs (DebugInfo.eachTopLevel)
 * and keeps .debug_info offsets, not DIE trees: what keeps a name lookup on
 * a vmlinux (thousands of units, millions of DIEs) to seconds and megabytes;
 * for a large program it is kept on disk between sessions (./nameIndexCache.ts).
 */
import { DebugInfo } from './info';
import { DW_AT, Die, TAG } from './dies';
import { loadNameIndex, nameIndexCachePath, saveNameIndex } from './nameIndexCache';

export interface NameIndex {
  /** `struct file` ... -> the DIE offset of a complete definition (else the first declaration) */
  readonly types: ReadonlyMap<string, number>;
  /** variable name -> its definitions (not declarations) in unit order, with whether each has a location or a constant */
  readonly variables: ReadonlyMap<string, readonly { offset: number; located: boolean }[]>;
}

const KINDS: Readonly<Record<number, string>> = {
  [TAG.structure_type]: 'struct', [TAG.union_type]: 'union', [TAG.enumeration_type]: 'enum', [TAG.typedef]: 'typedef',
};

const TAGS: ReadonlySet<number> = new Set([...Object.keys(KINDS).map(Number), TAG.variable]);

const cache = new WeakMap<DebugInfo, NameIndex>();

export function nameIndex(view: DebugInfo): NameIndex {
  // a relocated view has the same names (the index keeps .debug_info offsets, no address)
  const di = view.shared;
  let idx = cache.get(di);
  if (idx) return idx;
  const saved = nameIndexCachePath(di.infoBytes);
  idx = saved === null ? undefined : loadNameIndex(saved);
  if (idx) { cache.set(di, idx); return idx; }
  const types = new Map<string, number>();
  const declared = new Set<string>();
  const variables = new Map<string, { offset: number; located: boolean }[]>();
  const visit = (c: Die): void => {
    const k = KINDS[c.tag];
    if (k) {
      const n = di.name(c);
      if (n === undefined) return;
      const key = `${k} ${n}`;
      const complete = !c.attrs.has(DW_AT.declaration);
      if (!types.has(key) || (complete && declared.has(key))) {
        types.set(key, c.offset);
        if (complete) declared.delete(key); else declared.add(key);
      }
    } else if (c.tag === TAG.variable && !c.attrs.has(DW_AT.declaration)) {
      // a definition after a declaration (gcc: a header's `extern`) names it through DW_AT_specification
      const spec = c.attrs.get(DW_AT.specification);
      const n = di.name(c) ?? (spec?.kind === 'ref' ? nameOfShallow(di, spec.offset) : undefined);
      if (n === undefined) return;
      let l = variables.get(n);
      if (!l) variables.set(n, (l = []));
      l.push({ offset: c.offset, located: c.attrs.has(DW_AT.location) || c.attrs.has(DW_AT.const_value) });
    }
  };
  for (const u of di.units()) {
    if (u.error) continue;
    try { di.eachTopLevel(u, visit, TAGS); } catch { /* an unreadable unit adds nothing */ }
  }
  idx = { types, variables };
  cache.set(di, idx);
  if (saved !== null) saveNameIndex(saved, idx);
  return idx;
}

function nameOfShallow(di: DebugInfo, offset: number): string | undefined {
  const d = di.shallowAt(offset);
  return d ? di.name(d) : undefined;
}
