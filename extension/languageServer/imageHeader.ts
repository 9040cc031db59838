/**
 * Finds the `image "path"` header of a .kprobe file by a line scan, so the
 * image is known (and its line can carry a diagnostic) even when the rest of
 * the file does not parse.
 */

export interface ImageHeader {
  /** path as written (escapes \" and \\ decoded) */
  path: string;
  /** 0-based line of the header */
  line: number;
  /** 0-based character range of the path inside its quotes */
  start: number;
  end: number;
}

const HEADER = /^(\s*image\s+")((?:[^"\\]|\\.)*)"/;

export function findImageHeader(text: string): ImageHeader | undefined {
  const lines = text.split(/\r?\n/);
  let inBlockComment = false;
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    if (inBlockComment) {
      const close = line.indexOf('*/');
      if (close < 0) continue;
      inBlockComment = false;
      line = ' '.repeat(close + 2) + line.slice(close + 2);
    }
    const m = HEADER.exec(line);
    if (m) {
      const start = m[1].length;
      return { path: m[2].replace(/\\(["\\])/g, '$1'), line: i, start, end: start + m[2].length };
    }
    const trimmed = line.trim();
    // the header comes before the first probe; stop at the first probe keyword
    if (/^(kprobe|kretprobe|jprobe|kwatch)\b/.test(trimmed)) return undefined;
    const open = line.lastIndexOf('/*');
    if (open >= 0 && line.indexOf('*/', open + 2) < 0 && !line.slice(0, open).includes('//')) inBlockComment = true;
  }
  return undefined;
}
