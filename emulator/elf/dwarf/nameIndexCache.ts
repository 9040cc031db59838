/**
 * The name index of a large program kept on disk between sessions: building
 * it reads every unit's top-level DIEs (seconds on a distribution's
 * vmlinux), so for a .debug_info of CACHE_MIN_BYTES or more the index is
 * saved once as JSON under the cache directory, keyed by the SHA-1 of the
 * .debug_info bytes (the DIE offsets the index holds are offsets into
 * exactly those bytes), and read back by the next session that opens the
 * same image. Directory: $KPROBE_DWARF_CACHE_DIR, else
 * <os tmpdir>/kprobe-debug-dwarf; KPROBE_DWARF_CACHE_DIR=off turns it off.
 * A file that cannot be read, parsed or written is ignored (the index is
 * then built as without a cache); files are written whole and renamed into
 * place, so two sessions never read a half-written one.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NameIndex } from './nameIndex';

export const CACHE_MIN_BYTES = 16 << 20;
const FORMAT = 1;

function dir(): string | null {
  const d = process.env.KPROBE_DWARF_CACHE_DIR;
  if (d === 'off') return null;
  return d && d.length ? d : join(tmpdir(), 'kprobe-debug-dwarf');
}

/** the cache file for these .debug_info bytes, or null when they are small or caching is off */
export function nameIndexCachePath(info: Uint8Array | undefined): string | null {
  const d = dir();
  if (!d || !info || info.length < CACHE_MIN_BYTES) return null;
  return join(d, `names-${FORMAT}-${createHash('sha1').update(info).digest('hex')}.json`);
}

interface Stored { format: number; types: [string, number][]; variables: [string, [number, boolean][]][] }

export function loadNameIndex(path: string): NameIndex | undefined {
  try {
    const s = JSON.parse(readFileSync(path, 'utf8')) as Stored;
    if (s.format !== FORMAT || !Array.isArray(s.types) || !Array.isArray(s.variables)) return undefined;
    return {
      types: new Map(s.types),
      variables: new Map(s.variables.map(([n, l]) => [n, l.map(([offset, located]) => ({ offset, located }))])),
    };
  } catch {
    return undefined;
  }
}

export function saveNameIndex(path: string, idx: NameIndex): void {
  const s: Stored = {
    format: FORMAT, types: [...idx.types],
    variables: [...idx.variables].map(([n, l]) => [n, l.map(v => [v.offset, v.located] as [number, boolean])]),
  };
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(tmp, JSON.stringify(s));
    renameSync(tmp, path);
  } catch { /* a read-only or full disk: the next session builds the index again */ }
}
