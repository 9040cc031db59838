/**
 * Tokenizer shared by handler snippets and .kprobe files. Never throws:
 * malformed input becomes an 'error' token carrying a message.
 */

export type TokKind = 'ident' | 'number' | 'string' | 'char' | 'punct' | 'eof' | 'error';

export interface Pos { line: number; column: number }

export interface Token {
  kind: TokKind;
  /** source text of the token (for 'error': the offending text) */
  text: string;
  /** number / char value; for 'number' also the suffix flags */
  value?: bigint;
  /** decoded string literal content (bytes as a latin-1 string) */
  str?: string;
  /** number literal: had U suffix / count of L / written in decimal */
  unsigned?: boolean;
  longs?: number;
  decimal?: boolean;
  /** 'error' tokens: what is wrong */
  message?: string;
  /** offsets into the source */
  start: number;
  end: number;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

const PUNCTS = [
  '<<=', '>>=', '...', '->', '++', '--', '<<', '>>', '<=', '>=', '==', '!=', '&&', '||',
  '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=',
  '+', '-', '*', '/', '%', '<', '>', '=', '!', '~', '&', '|', '^', '?', ':', ';', ',', '.', '(', ')', '[', ']', '{', '}',
];

const MAX_U64 = (1n << 64n) - 1n;

/** PUNCTS by length: the longest punctuator at a position wins (what PUNCTS' order gives `find`). */
const PUNCT3 = new Set(PUNCTS.filter(q => q.length === 3));
const PUNCT2 = new Set(PUNCTS.filter(q => q.length === 2));
const PUNCT1 = new Set(PUNCTS.filter(q => q.length === 1));

// character classes by code (a cold run tokenizes with the interpreter: a regular expression per character costs)
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isIdentStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;
const isIdentPart = (c: number): boolean => isIdentStart(c) || isDigit(c);

/**
 * Tokenize `src`. Positions start at (startLine, startColumn) for the first
 * character; later lines start at column 1. With maxTokens, stops after
 * maxTokens + 1 tokens (the result is longer than maxTokens: a prefix only),
 * then the eof token.
 */
export function tokenize(src: string, startLine = 1, startColumn = 1, maxTokens = Infinity): Token[] {
  const toks: Token[] = [];
  let i = 0, line = startLine, col = startColumn;
  const n = src.length;

  const advance = (to: number): void => {
    for (; i < to; i++) {
      if (src.charCodeAt(i) === 10) { line++; col = 1; } else col++;
    }
  };
  const push = (kind: TokKind, start: number, sl: number, sc: number, extra?: Partial<Token>): void => {
    toks.push({ kind, text: src.slice(start, i), start, end: i, line: sl, column: sc, endLine: line, endColumn: col, ...extra });
  };

  while (i < n && toks.length <= maxTokens) {
    const c = src[i];
    if (c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '\f' || c === '\v') { advance(i + 1); continue; }
    const start = i, sl = line, sc = col;
    if (c === '/' && src[i + 1] === '/') {
      let j = i;
      while (j < n && src[j] !== '\n') j++;
      advance(j);
      continue;
    }
    if (c === '/' && src[i + 1] === '*') {
      const j = src.indexOf('*/', i + 2);
      if (j < 0) { advance(n); push('error', start, sl, sc, { message: 'unterminated /* comment' }); break; }
      advance(j + 2);
      continue;
    }
    const code = src.charCodeAt(i);
    if (isIdentStart(code)) {
      let j = i + 1;
      while (j < n && isIdentPart(src.charCodeAt(j))) j++;
      advance(j);
      push('ident', start, sl, sc);
      continue;
    }
    if (isDigit(code) || (c === '.' && isDigit(src.charCodeAt(i + 1)))) {
      let j = i;
      for (let d = src.charCodeAt(j); j < n && (isIdentPart(d) || d === 46); d = src.charCodeAt(++j));
      advance(j);
      const r = parseNumber(src.slice(start, j));
      if ('error' in r) push('error', start, sl, sc, { message: r.error });
      else push('number', start, sl, sc, { value: r.value, unsigned: r.unsigned, longs: r.longs, decimal: r.decimal });
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let out = '';
      let err: string | undefined;
      while (j < n && src[j] !== c && src[j] !== '\n') {
        if (src[j] === '\\') {
          const e = decodeEscape(src, j);
          if ('error' in e) { err ??= e.error; j = e.next; continue; }
          out += e.ch;
          j = e.next;
        } else {
          const code = src.charCodeAt(j);
          if (code > 0xff) out += String.fromCharCode(...new TextEncoder().encode(src[j]));
          else out += src[j];
          j++;
        }
      }
      if (j >= n || src[j] !== c) {
        advance(j);
        push('error', start, sl, sc, { message: c === '"' ? 'unterminated string literal' : 'unterminated character literal' });
        continue;
      }
      advance(j + 1);
      if (err) { push('error', start, sl, sc, { message: err }); continue; }
      if (c === '"') push('string', start, sl, sc, { str: out });
      else if (out.length !== 1) push('error', start, sl, sc, { message: out.length === 0 ? 'empty character literal' : 'multi-character character literal' });
      else push('char', start, sl, sc, { value: BigInt(out.charCodeAt(0)) });
      continue;
    }
    const p3 = src.slice(i, i + 3), p2 = src.slice(i, i + 2);
    const p = PUNCT3.has(p3) ? p3 : PUNCT2.has(p2) ? p2 : PUNCT1.has(c) ? c : undefined;
    if (p) { advance(i + p.length); push('punct', start, sl, sc); continue; }
    advance(i + 1);
    push('error', start, sl, sc, { message: `unexpected character '${c}'` });
  }
  toks.push({ kind: 'eof', text: '', start: n, end: n, line, column: col, endLine: line, endColumn: col });
  return toks;
}

function decodeEscape(src: string, j: number): { ch: string; next: number } | { error: string; next: number } {
  const e = src[j + 1];
  const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '0': '\0', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', f: '\f', v: '\v', e: '\x1b', '?': '?' };
  if (e === undefined) return { error: 'unterminated escape sequence', next: j + 1 };
  if (e === 'x') {
    let k = j + 2, v = 0;
    while (k < src.length && /[0-9a-fA-F]/.test(src[k])) { v = (v * 16 + parseInt(src[k], 16)) & 0xfff; k++; }
    if (k === j + 2) return { error: '\\x used with no following hex digits', next: k };
    if (v > 0xff) return { error: 'hex escape sequence out of range', next: k };
    return { ch: String.fromCharCode(v), next: k };
  }
  if (/[0-7]/.test(e)) {
    let k = j + 1, v = 0;
    while (k < src.length && k < j + 4 && /[0-7]/.test(src[k])) { v = v * 8 + (src.charCodeAt(k) - 48); k++; }
    if (v > 0xff) return { error: 'octal escape sequence out of range', next: k };
    return { ch: String.fromCharCode(v), next: k };
  }
  if (e in simple) return { ch: simple[e], next: j + 2 };
  return { error: `unknown escape sequence '\\${e}'`, next: j + 2 };
}

function parseNumber(text: string): { value: bigint; unsigned: boolean; longs: number; decimal: boolean } | { error: string } {
  const m = /^(0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)([uUlL]*)$/.exec(text);
  if (!m) {
    if (/[.eEpP]/.test(text) && /^[0-9.]/.test(text) && !/^0[xX]/.test(text)) return { error: `floating-point literal '${text}' is not supported (integers only)` };
    return { error: `invalid number literal '${text}'` };
  }
  const body = m[1], suf = m[2].toLowerCase();
  if (!/^(u?(l|ll)?|(l|ll)u)$/.test(suf)) return { error: `invalid suffix '${m[2]}' on integer literal` };
  let value: bigint;
  let decimal = false;
  if (/^0[xX]/.test(body) || /^0[bB]/.test(body)) value = BigInt(body);
  else if (body.length > 1 && body[0] === '0') {
    if (/[89]/.test(body)) return { error: `invalid digit in octal literal '${text}'` };
    value = BigInt('0o' + body.slice(1));
  } else { value = BigInt(body); decimal = true; }
  if (value > MAX_U64) return { error: `integer literal '${text}' is too large for 64 bits` };
  return { value, unsigned: suf.includes('u'), longs: suf.includes('ll') ? 2 : suf.includes('l') ? 1 : 0, decimal };
}
