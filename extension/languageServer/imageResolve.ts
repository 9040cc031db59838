/** Which image a document is checked against, and where a problem with it is reported. */
import { fileURLToPath } from 'node:url';
import { dirname, isAbsolute, resolve } from 'node:path';
import { findImageHeader, type ImageHeader } from './imageHeader';

export type ImageChoice =
  | { kind: 'none' }
  | { kind: 'path'; path: string; origin: 'header' | 'setting'; header?: ImageHeader; written: string }
  | { kind: 'error'; message: string; header?: ImageHeader };

export function uriToPath(uri: string): string | undefined {
  if (!uri.startsWith('file:')) return undefined;
  try { return fileURLToPath(uri); } catch { return undefined; }
}

/** Workspace folder (fs path) that contains the file, else the first one. */
function folderFor(file: string | undefined, folders: readonly string[]): string | undefined {
  if (file) {
    const hit = folders.filter(f => file === f || file.startsWith(f.endsWith('/') ? f : f + '/'))
      .sort((a, b) => b.length - a.length)[0];
    if (hit) return hit;
  }
  return folders[0];
}

export function chooseImage(uri: string, text: string, settingImage: string | undefined, folders: readonly string[]): ImageChoice {
  const file = uriToPath(uri);
  const header = findImageHeader(text);
  if (header) {
    if (header.path === '') return { kind: 'error', message: 'empty image path', header };
    if (isAbsolute(header.path)) return { kind: 'path', path: header.path, origin: 'header', header, written: header.path };
    if (!file) return { kind: 'error', message: `image "${header.path}" is relative, but this document is not a saved file; save it or use an absolute path`, header };
    return { kind: 'path', path: resolve(dirname(file), header.path), origin: 'header', header, written: header.path };
  }
  if (settingImage) {
    const folder = folderFor(file, folders);
    let p = settingImage;
    if (p.includes('${workspaceFolder}')) {
      if (!folder) return { kind: 'error', message: `setting kprobe.image "${settingImage}" uses \${workspaceFolder} but no workspace folder is open` };
      p = p.split('${workspaceFolder}').join(folder);
    }
    if (!isAbsolute(p)) {
      const base = folder ?? (file ? dirname(file) : undefined);
      if (!base) return { kind: 'error', message: `setting kprobe.image "${settingImage}" is relative and there is no workspace folder to resolve it against` };
      p = resolve(base, p);
    }
    return { kind: 'path', path: p, origin: 'setting', written: settingImage };
  }
  return { kind: 'none' };
}
