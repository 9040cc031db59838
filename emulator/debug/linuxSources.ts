/**
 * Linux's sources for the full-system PC's debugger: which DWARF file
 * names (the vmlinux's line table: Debian's are relative to the build
 * directory, e.g. `debian/build/build_amd64_none_cloud-amd64/fs/open.c`) a
 * file the user opened may be, and where a DWARF file is on this host.
 *
 * Roots: the launch's `sourceMap` (DWARF directory -> local tree), then
 * the fetched Debian linux-source-6.1 (test/modules/linux/cache/
 * linux-source-6.1 under the adapter's working directory) when it is
 * there. A DWARF name under a sourceMap key is mapped by that prefix;
 * otherwise its suffixes are looked for under each root (SourceMap).
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { SourceMap } from './sourceMap';

export const DEFAULT_LINUX_SOURCE = path.join('test', 'modules', 'linux', 'cache', 'linux-source-6.1');

export class LinuxSources {
  private readonly map: [string, string][];
  private readonly roots: string[];
  private readonly search: SourceMap;

  constructor(vmlinuxPath: string, sourceMap: Record<string, string> | undefined) {
    this.map = Object.entries(sourceMap ?? {}).map(([d, l]) => [d.replace(/\/+$/, ''), path.resolve(l)]);
    const def = path.resolve(DEFAULT_LINUX_SOURCE);
    this.roots = [...this.map.map(([, l]) => l), ...(existsSync(def) ? [def] : [])];
    this.search = new SourceMap(vmlinuxPath, this.roots);
  }

  /** DWARF file names a client path may be, the most specific first */
  dwarfCandidates(clientPath: string): string[] {
    const abs = path.resolve(clientPath);
    const out: string[] = [];
    for (const [dwarfDir, local] of this.map) {
      if (abs.startsWith(local + path.sep)) out.push(`${dwarfDir}/${path.relative(local, abs).split(path.sep).join('/')}`);
    }
    for (const r of this.roots) if (abs.startsWith(r + path.sep)) out.push(path.relative(r, abs).split(path.sep).join('/'));
    // a tree the launch does not name: the path's last components (fs/open.c matches the line table's .../fs/open.c)
    const parts = abs.split(path.sep).filter(Boolean);
    for (let n = Math.min(4, parts.length); n >= 2; n--) out.push(parts.slice(-n).join('/'));
    return [...new Set(out)];
  }

  /** the local file of a DWARF file name, or the name itself when none is found */
  toLocal(dwarfFile: string): string {
    for (const [dwarfDir, local] of this.map) {
      if (dwarfFile.startsWith(dwarfDir + '/')) {
        const p = path.join(local, dwarfFile.slice(dwarfDir.length + 1));
        if (existsSync(p)) return p;
      }
    }
    return this.search.toLocal(dwarfFile);
  }
}
