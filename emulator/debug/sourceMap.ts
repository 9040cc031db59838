/**
 * The debug target's sources: maps source file names recorded in DWARF (often relative, e.g.
 * "examples/kernel/fork.c" or "./lib.c") to files on this machine, and back.
 * Candidate roots: the directories from the image's own folder up to three
 * levels above it (the sample images live in examples/kernel/build/), then
 * the adapter's working directory. Unresolvable names are returned as-is.
 */
import { existsSync } from 'node:fs';
import * as path from 'node:path';

export class SourceMap {
  private readonly roots: string[];
  private readonly cache = new Map<string, string>();

  constructor(imagePath: string, extraRoots: readonly string[] = []) {
    const roots: string[] = [];
    let d = path.dirname(path.resolve(imagePath));
    for (let i = 0; i < 4; i++) {
      roots.push(d);
      d = path.dirname(d);
    }
    this.roots = [...new Set([...extraRoots, ...roots, process.cwd()])];
  }

  /** Local path of a DWARF file name. */
  toLocal(file: string): string {
    const hit = this.cache.get(file);
    if (hit !== undefined) return hit;
    let found = file;
    if (path.isAbsolute(file) && existsSync(file)) {
      found = file;
    } else {
      const parts = file.split(/[\\/]+/).filter(p => p && p !== '.');
      // Try the full relative name under each root, then shorter suffixes.
      search: for (let skip = path.isAbsolute(file) ? 1 : 0; skip < parts.length; skip++) {
        const rel = parts.slice(skip).join(path.sep);
        for (const r of this.roots) {
          const p = path.join(r, rel);
          if (existsSync(p)) { found = p; break search; }
        }
      }
    }
    this.cache.set(file, found);
    return found;
  }

  /** Whether a client path names the same file as a DWARF file name. */
  same(clientPath: string, dwarfFile: string): boolean {
    return path.resolve(this.toLocal(dwarfFile)) === path.resolve(clientPath);
  }
}
