/**
 * The kernel modules a .kprobe file will meet, for symbol completion.
 *
 * Rule: `module "path.ko"` lines before the first probe name them, one per
 * line, the path relative to the .kprobe file (like `image "..."`):
 *
 *     image "../kernel/build/kernel-x86_64.elf"
 *     // module "../modules/build/kprobe_example-x86_64.ko"
 *
 * The probe-file parser (emulator/handlers/probeFile.ts) does not know a
 * `module` line yet, so the line is also recognised inside a `//` comment,
 * which every tool accepts today; the bare form is for when the parser
 * learns it. The symbols are the module's defined functions and objects
 * (its .symtab, read with the module loader's parser), offered with the
 * module's name ("[kprobe_example]"), as kallsyms prints them once loaded.
 *
 * Relative paths need the .kprobe file's directory: given `file`, against
 * it; otherwise through a relative image header's path (both are relative
 * to the same file, and the image's resolved path is known), which works
 * when the module's path climbs at least as many levels as the image's
 * ("../modules/build/x.ko" with "../kernel/build/k.elf"). A module that cannot
 * be read or parsed offers nothing. Parsed modules are cached by path +
 * mtime + size.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';
import { moduleName, parseRelObject, SHN_UNDEF } from '../../emulator/kernel/modules/object';
import { findImageHeader } from './imageHeader';

export interface ModuleSymbol { name: string; type: 'func' | 'object'; module: string; path: string }

const HEADER = /^\s*(?:\/\/\s*)?module\s+"((?:[^"\\]|\\.)*)"/;
const STT_OBJECT = 1, STT_FUNC = 2;

/** the paths of the `module "..."` lines before the first probe, as written */
export function findModuleHeaders(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split(/\r?\n/)) {
    if (/^\s*(kprobe|kretprobe|jprobe|kwatch|uprobe|uretprobe)\b/.test(line)) break;
    const m = HEADER.exec(line);
    if (m && m[1]) out.push(m[1].replace(/\\(["\\])/g, '$1'));
  }
  return out;
}

/** where a module path written in the file points (undefined: relative, and neither the file nor a relative image header to go by) */
export function resolveModulePath(written: string, text: string, file?: string, imagePath?: string): string | undefined {
  if (isAbsolute(written)) return written;
  if (file) return resolve(dirname(file), written);
  const h = findImageHeader(text);
  if (!h || !imagePath || isAbsolute(h.path)) return undefined;
  // image = resolve(D, h.path) and module = resolve(D, written) for the same unknown D: the
  // module's path relative to the image's directory, unless it names one of D's own directories
  // (the module climbs fewer levels than the image: "x.ko" beside an image "../kernel/k.elf")
  const unknown = '<kprobe-unknown-dir>';
  const base = resolve('/', ...Array.from({ length: 64 }, () => unknown));
  const r = relative(dirname(resolve(base, h.path)), resolve(base, written));
  return r.includes(unknown) ? undefined : resolve(dirname(imagePath), r);
}

interface Entry { mtimeMs: number; size: number; symbols: ModuleSymbol[] }
const cache = new Map<string, Entry>();

/** a module's defined functions and objects; [] when it cannot be read */
export function moduleSymbols(path: string): ModuleSymbol[] {
  let st;
  try { st = statSync(path); } catch { cache.delete(path); return []; }
  const hit = cache.get(path);
  if (hit && hit.mtimeMs === st.mtimeMs && hit.size === st.size) return hit.symbols;
  let symbols: ModuleSymbol[] = [];
  try {
    const obj = parseRelObject(new Uint8Array(readFileSync(path)), path);
    const module = moduleName(obj, path);
    const seen = new Set<string>();
    for (const s of obj.symbols) {
      if (!s.name || seen.has(s.name) || s.shndx === SHN_UNDEF || s.shndx >= 0xff00) continue;
      if (s.type !== STT_FUNC && s.type !== STT_OBJECT) continue;
      if (s.name.startsWith('$') || s.name.startsWith('.L') || obj.sections[s.shndx]?.name === '.modinfo') continue;
      seen.add(s.name);
      symbols.push({ name: s.name, type: s.type === STT_FUNC ? 'func' : 'object', module, path });
    }
    symbols.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    symbols = [];
  }
  cache.set(path, { mtimeMs: st.mtimeMs, size: st.size, symbols });
  return symbols;
}

/** the symbols of every module the file names (in header order) */
export function headerModuleSymbols(text: string, file?: string, imagePath?: string): ModuleSymbol[] {
  const out: ModuleSymbol[] = [];
  for (const w of findModuleHeaders(text)) {
    const p = resolveModulePath(w, text, file, imagePath);
    if (p) out.push(...moduleSymbols(p));
  }
  return out;
}
