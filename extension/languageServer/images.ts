/**
 * Loads kernel images for the language server, cached by path + mtime + size
 * so an image rebuilt while the editor is open is picked up again. A missing
 * or malformed image is a result, never an exception.
 */
import { statSync } from 'node:fs';
import { loadElf, type ElfImage, type ElfSymbol } from '../../emulator/elf';

export type ImageLoad =
  | { ok: true; path: string; image: ElfImage }
  | { ok: false; path: string; message: string };

interface Entry { mtimeMs: number; size: number; result: ImageLoad }

export class ImageCache {
  private readonly entries = new Map<string, Entry>();
  /** number of times an image was actually read from disk (for tests) */
  loads = 0;

  get(path: string): ImageLoad {
    let st;
    try {
      st = statSync(path);
    } catch (e) {
      this.entries.delete(path);
      return { ok: false, path, message: `cannot open image ${path}: ${errText(e)}` };
    }
    if (!st.isFile()) return { ok: false, path, message: `image ${path} is not a file` };
    const hit = this.entries.get(path);
    if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.result;
    let result: ImageLoad;
    try {
      this.loads++;
      result = { ok: true, path, image: loadElf(path) };
    } catch (e) {
      result = { ok: false, path, message: `cannot load image ${path}: ${errText(e)}` };
    }
    this.entries.set(path, { mtimeMs: st.mtimeMs, size: st.size, result });
    return result;
  }
}

function errText(e: unknown): string {
  if (e instanceof Error) {
    const code = (e as NodeJS.ErrnoException).code;
    return code && !e.message.startsWith(code) ? `${code}: ${e.message}` : e.message;
  }
  return String(e);
}

/** Function and object symbols usable as probe targets / symbol() arguments, each name once. */
export function probeableSymbols(image: ElfImage): ElfSymbol[] {
  const seen = new Set<string>();
  const out: ElfSymbol[] = [];
  for (const s of image.symbols.all()) {
    if (s.name === '' || seen.has(s.name)) continue;
    if (s.type !== 'func' && s.type !== 'object' && s.type !== 'notype') continue;
    if (s.shndx === 0 || s.name.startsWith('$') || s.name.startsWith('.L')) continue;
    seen.add(s.name);
    out.push(s);
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
