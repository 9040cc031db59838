/** Folding ranges: brace blocks and multi-line block comments (the grammar cannot fold by braces itself). */
import { FoldingRange, FoldingRangeKind } from 'vscode-languageserver/node';

export function foldingRanges(text: string): FoldingRange[] {
  const out: FoldingRange[] = [];
  const open: number[] = [];
  let line = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') { line++; continue; }
    if (c === '/' && text[i + 1] === '/') {
      const nl = text.indexOf('\n', i);
      if (nl < 0) break;
      i = nl - 1;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const startLine = line;
      const close = text.indexOf('*/', i + 2);
      const stop = close < 0 ? text.length : close + 2;
      for (let j = i; j < stop; j++) if (text[j] === '\n') line++;
      if (line > startLine) out.push({ startLine, endLine: line, kind: FoldingRangeKind.Comment });
      i = stop - 1;
      continue;
    }
    if (c === '"' || c === '\'') {
      let j = i + 1;
      while (j < text.length && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      i = Math.min(j, text.length - 1);
      if (text[j] === '\n') line++;
      continue;
    }
    if (c === '{') open.push(line);
    else if (c === '}') {
      const start = open.pop();
      // fold up to the line before the closing brace so it stays visible
      if (start !== undefined && line - 1 > start) out.push({ startLine: start, endLine: line - 1 });
    }
  }
  return out.sort((a, b) => a.startLine - b.startLine || a.endLine - b.endLine);
}
