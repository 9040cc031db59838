/**
 * Where the cursor is in a .kprobe document, found by a forgiving lexical
 * scan of the text before it (the document is usually mid-edit and does not
 * parse): inside a comment or string, at file level, inside a probe block
 * (where handler kinds go), or inside a handler body (C statements).
 */

export type ProbeKeyword = 'kprobe' | 'kretprobe' | 'jprobe' | 'uprobe' | 'uretprobe' | 'kwatch';

export type CursorContext =
  | { where: 'comment' }
  /** inside a string literal; `prefix` is the text of the string before the cursor, `call` the function it is an argument of */
  | { where: 'string'; prefix: string; call?: string; handler?: string }
  | { where: 'top' }
  /** inside `kprobe X { ... }` but outside any handler body */
  | { where: 'probe'; probe: ProbeKeyword }
  /** inside a handler body; `handler` is pre/post/fault/entry/return, or 'jprobe' / 'kwatch' for a jprobe's / kwatch's body */
  | { where: 'handler'; probe?: ProbeKeyword; handler: string };

type Frame =
  | { t: 'probe'; probe: ProbeKeyword }
  | { t: 'handler'; probe?: ProbeKeyword; handler: string }
  | { t: 'block'; probe?: ProbeKeyword; handler?: string };

const PROBE_WORDS = new Set(['kprobe', 'kretprobe', 'jprobe', 'uprobe', 'uretprobe', 'kwatch']);

export function cursorContext(text: string, offset: number): CursorContext {
  const stack: Frame[] = [];
  /** probe keyword seen at file level since the last top-level block */
  let pendingProbe: ProbeKeyword | undefined;
  /** last identifier seen at the current level (handler kind before `{` inside a probe) */
  let lastWord: string | undefined;
  /** identifier immediately before the last `(` (for string arguments) */
  const callStack: (string | undefined)[] = [];
  let i = 0;
  const end = Math.min(offset, text.length);
  while (i < end) {
    const c = text[i];
    if (c === '/' && text[i + 1] === '/') {
      const nl = text.indexOf('\n', i);
      if (nl < 0 || nl >= end) return { where: 'comment' };
      i = nl + 1;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const close = text.indexOf('*/', i + 2);
      if (close < 0 || close + 2 > end) return { where: 'comment' };
      i = close + 2;
      continue;
    }
    if (c === '"' || c === '\'') {
      let j = i + 1;
      while (j < end && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      if (j >= end) {
        const top = stack[stack.length - 1];
        const handler = top && top.t !== 'probe' ? top.handler : undefined;
        return { where: 'string', prefix: text.slice(i + 1, end), call: callStack[callStack.length - 1], handler };
      }
      i = j + 1;
      lastWord = undefined;
      continue;
    }
    if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < text.length && /[A-Za-z0-9_.$]/.test(text[j])) j++;
      const word = text.slice(i, j);
      if (stack.length === 0 && PROBE_WORDS.has(word)) pendingProbe = word as ProbeKeyword;
      lastWord = word;
      i = j;
      continue;
    }
    if (c === '(') { callStack.push(lastWord); lastWord = undefined; }
    else if (c === ')') { callStack.pop(); lastWord = undefined; }
    else if (c === '{') {
      const top = stack[stack.length - 1];
      if (!top) {
        // a jprobe's and a kwatch's body is their handler
        if (pendingProbe === 'jprobe' || pendingProbe === 'kwatch') stack.push({ t: 'handler', probe: pendingProbe, handler: pendingProbe });
        else if (pendingProbe) stack.push({ t: 'probe', probe: pendingProbe });
        else stack.push({ t: 'block' });
        pendingProbe = undefined;
      } else if (top.t === 'probe') {
        stack.push({ t: 'handler', probe: top.probe, handler: lastWord ?? '' });
      } else {
        stack.push({ t: 'block', probe: top.probe, handler: top.handler });
      }
      lastWord = undefined;
    } else if (c === '}') {
      stack.pop();
      lastWord = undefined;
      if (stack.length === 0) pendingProbe = undefined;
    } else if (!/\s/.test(c)) {
      lastWord = undefined;
    }
    i++;
  }
  const top = stack[stack.length - 1];
  if (!top) return { where: 'top' };
  if (top.t === 'probe') return { where: 'probe', probe: top.probe };
  if (top.t === 'handler') return { where: 'handler', probe: top.probe, handler: top.handler };
  return top.handler !== undefined ? { where: 'handler', probe: top.probe, handler: top.handler } : { where: 'top' };
}
