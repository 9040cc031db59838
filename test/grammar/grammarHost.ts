/**
 * Loads the kprobe TextMate grammar with vscode-textmate + vscode-oniguruma
 * (the same engines VS Code uses) and turns text into readable token lines.
 */
import { readFileSync } from 'node:fs';
import * as vsctm from 'vscode-textmate';
import * as oniguruma from 'vscode-oniguruma';
import { repoPath } from '../util/paths';

export const KPROBE_SCOPE = 'source.kprobe';

export interface Token {
  text: string;
  /** scopes without the root source.kprobe */
  scopes: string[];
}

let grammarPromise: Promise<vsctm.IGrammar> | undefined;

async function loadOnig(): Promise<vsctm.IOnigLib> {
  const wasm = readFileSync(repoPath('node_modules', 'vscode-oniguruma', 'release', 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer);
  return {
    createOnigScanner: (patterns: string[]) => new oniguruma.OnigScanner(patterns),
    createOnigString: (s: string) => new oniguruma.OnigString(s),
  };
}

export function loadKprobeGrammar(): Promise<vsctm.IGrammar> {
  grammarPromise ??= (async () => {
    const grammarPath = repoPath('syntaxes', 'kprobe.tmLanguage.json');
    const registry = new vsctm.Registry({
      onigLib: loadOnig(),
      loadGrammar: async (scopeName: string) =>
        scopeName === KPROBE_SCOPE ? vsctm.parseRawGrammar(readFileSync(grammarPath, 'utf8'), grammarPath) : null,
    });
    const g = await registry.loadGrammar(KPROBE_SCOPE);
    if (!g) throw new Error(`${grammarPath}: grammar ${KPROBE_SCOPE} did not load`);
    return g;
  })();
  return grammarPromise;
}

/** Tokens of every line of text (line i of the result = line i+1 of the text). */
export function tokenize(grammar: vsctm.IGrammar, text: string): Token[][] {
  const lines = text.split(/\r?\n/);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  let stack = vsctm.INITIAL;
  const out: Token[][] = [];
  for (const line of lines) {
    const r = grammar.tokenizeLine(line, stack, 10_000);
    if (r.stoppedEarly) throw new Error(`tokenization stopped early on line ${out.length + 1}: ${line}`);
    out.push(r.tokens.map(t => ({
      text: line.slice(t.startIndex, Math.min(t.endIndex, line.length)),
      scopes: t.scopes.filter(s => s !== KPROBE_SCOPE),
    })).filter(t => t.text.length > 0));
    stack = r.ruleStack;
  }
  return out;
}

/**
 * The golden text: each source line as "N: <line>", then one row per
 * non-blank token: the token text (JSON-quoted) and its scopes, innermost last.
 */
export function renderGolden(text: string, tokens: Token[][]): string {
  const lines = text.split(/\r?\n/);
  const rows: string[] = [];
  tokens.forEach((toks, i) => {
    rows.push(`${i + 1}: ${lines[i]}`);
    for (const t of toks) {
      if (t.text.trim() === '') continue;
      rows.push(`  ${JSON.stringify(t.text).padEnd(24)} → ${t.scopes.join(' ') || '(source)'}`);
    }
  });
  return rows.join('\n') + '\n';
}

/** The scopes of the first token equal to `text` on a line (1-based), for focused assertions. */
export function scopesOf(tokens: Token[][], line: number, text: string, nth = 0): string[] {
  const hits = (tokens[line - 1] ?? []).filter(t => t.text === text);
  const hit = hits[nth];
  if (!hit) throw new Error(`no token ${JSON.stringify(text)} (#${nth}) on line ${line}`);
  return hit.scopes;
}
