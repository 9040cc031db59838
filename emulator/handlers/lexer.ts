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
  const lexer = new Lexer(src, startLine, startColumn);
  lexer.fill(toks, maxTokens + 1);
  if (!lexer.done) lexer.pushEof(toks);
  return toks;
}

/**
 * The tokens of `src` a few at a time (what tokenize returns, in pieces): a
 * parser that asks for more as it goes and drops what it has parsed keeps
 * only a window of a big file's tokens alive, not all of them until the end.
 */
export class Lexer {
  private i = 0;
  private line: number;
  private col: number;
  /** an unterminated comment ended the tokens: only the eof token is left */
  private stopped = false;
  /** the eof token was pushed: nothing more comes */
  done = false;

  constructor(private readonly src: string, startLine = 1, startColumn = 1) {
    this.line = startLine;
    this.col = startColumn;
  }

  /** Push the next tokens onto `toks` until it holds `upTo` tokens or the eof token was pushed (done). */
  fill(toks: Token[], upTo: number): void {
    const src = this.src, n = src.length;
    let i = this.i, line = this.line, col = this.col, stopped = this.stopped;
    // advance and push as plain loops and literals in the loop below, not closures: variables a closure
    // shares live in a context object, and every character of a file of thousands of probes goes through them
    while (toks.length < upTo) {
      if (i >= n || stopped) {
        this.line = line;
        this.col = col;
        this.pushEof(toks);
        break;
      }
      const code = src.charCodeAt(i);
      // whitespace: ' ' \t \n \v \f \r
      if (code === 32 || (code >= 9 && code <= 13)) {
        if (code === 10) { line++; col = 1; } else col++;
        i++;
        continue;
      }
      const start = i, sl = line, sc = col;
      let kind: TokKind;
      let extra: Partial<Token> | undefined;
      let to: number;
      const c = src[i];
      if (code === 47 && src.charCodeAt(i + 1) === 47) { // '//' up to the end of the line
        let j = i;
        while (j < n && src.charCodeAt(j) !== 10) j++;
        col += j - i;
        i = j;
        continue;
      }
      if (code === 47 && src.charCodeAt(i + 1) === 42) { // '/*'
        const j = src.indexOf('*/', i + 2);
        to = j < 0 ? n : j + 2;
        for (; i < to; i++) {
          if (src.charCodeAt(i) === 10) { line++; col = 1; } else col++;
        }
        if (j >= 0) continue;
        toks.push(newToken('error', src.slice(start, i), start, i, sl, sc, line, col, { message: 'unterminated /* comment' }));
        stopped = true;
        continue;
      }
      if (isIdentStart(code)) {
        let j = i + 1;
        while (j < n && isIdentPart(src.charCodeAt(j))) j++;
        to = j;
        kind = 'ident';
      } else if (isDigit(code) || (code === 46 && isDigit(src.charCodeAt(i + 1)))) {
        let j = i;
        for (let d = src.charCodeAt(j); j < n && (isIdentPart(d) || d === 46); d = src.charCodeAt(++j));
        // a number token: its fields in one literal (tokens never span lines: the column moves by the length)
        const text = src.slice(start, j);
        const r = plainNumber(text) ?? parseNumber(text);
        col += j - i;
        i = j;
        if ('error' in r) toks.push(newToken('error', text, start, i, sl, sc, line, col, { message: r.error }));
        else toks.push({ kind: 'number', text, start, end: i, line: sl, column: sc, endLine: line, endColumn: col, value: r.value, unsigned: r.unsigned, longs: r.longs, decimal: r.decimal });
        continue;
      } else if (c === '"' || c === "'") {
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
          to = j;
          kind = 'error';
          extra = { message: c === '"' ? 'unterminated string literal' : 'unterminated character literal' };
        } else {
          to = j + 1;
          if (err) { kind = 'error'; extra = { message: err }; } else if (c === '"') { kind = 'string'; extra = { str: out }; } else if (out.length !== 1) {
            kind = 'error';
            extra = { message: out.length === 0 ? 'empty character literal' : 'multi-character character literal' };
          } else { kind = 'char'; extra = { value: BigInt(out.charCodeAt(0)) }; }
        }
      } else {
        // the longest punctuator at i (the candidates of its first character, longest first): its text is the table's
        const cands = code < 128 ? PUNCT_BY_FIRST[code] : undefined;
        let q: string | undefined;
        if (cands !== undefined) for (const p of cands) if (src.startsWith(p, i)) { q = p; break; }
        if (q !== undefined) {
          col += q.length;
          i += q.length;
          toks.push(newToken('punct', q, start, i, sl, sc, line, col));
          continue;
        }
        to = i + 1;
        kind = 'error';
        extra = { message: `unexpected character '${c}'` };
      }
      for (; i < to; i++) {
        if (src.charCodeAt(i) === 10) { line++; col = 1; } else col++;
      }
      toks.push(newToken(kind, src.slice(start, i), start, i, sl, sc, line, col, extra));
    }
    this.i = i;
    this.line = line;
    this.col = col;
    this.stopped = stopped;
  }

  /** the eof token where the tokens stop (its offset is the end of the source) */
  pushEof(toks: Token[]): void {
    const n = this.src.length, line = this.line, col = this.col;
    toks.push({ kind: 'eof', text: '', start: n, end: n, line, column: col, endLine: line, endColumn: col });
    this.done = true;
  }
}

/** the punctuators by the code of their first character, longest first (the longest at a position wins) */
const PUNCT_BY_FIRST: (readonly string[] | undefined)[] = (() => {
  const out: string[][] = [];
  for (const q of [...PUNCTS].sort((a, b) => b.length - a.length)) (out[q.charCodeAt(0)] ??= []).push(q);
  return out;
})();

/** a token of src[start, end), `text` (its fields in one order for every kind, then the kind's own) */
function newToken(kind: TokKind, text: string, start: number, end: number, line: number, column: number, endLine: number, endColumn: number, extra?: Partial<Token>): Token {
  const t: Token = { kind, text, start, end, line, column, endLine, endColumn };
  return extra === undefined ? t : Object.assign(t, extra);
}

/**
 * A number literal without suffix that parseNumber would read the same way: decimal digits
 * (not starting with 0, or 0 alone) or 0x and hex digits, up to 16 characters (below 2^64);
 * undefined for any other text (parseNumber reads it).
 */
function plainNumber(text: string): { value: bigint; unsigned: boolean; longs: number; decimal: boolean } | undefined {
  const n = text.length;
  if (n > 16) return undefined;
  const c0 = text.charCodeAt(0);
  if (n > 2 && c0 === 48 && (text.charCodeAt(1) | 0x20) === 120) {
    for (let k = 2; k < n; k++) {
      const d = text.charCodeAt(k);
      if (!isDigit(d) && !((d | 0x20) >= 97 && (d | 0x20) <= 102)) return undefined;
    }
    return { value: BigInt(text), unsigned: false, longs: 0, decimal: false };
  }
  if (c0 === 48 && n > 1) return undefined;
  for (let k = 0; k < n; k++) if (!isDigit(text.charCodeAt(k))) return undefined;
  return { value: BigInt(text), unsigned: false, longs: 0, decimal: true };
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
