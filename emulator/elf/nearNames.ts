/**
 * "Did you mean" for misspelled symbol names (`sys_opne`, `do_frok`): the
 * names nearest by optimal-string-alignment distance (Levenshtein plus the
 * transposition of two neighbours, the commonest typo), within about a third
 * of the word's length.
 */
import type { SymbolTable } from './types';

/** Edit distance with adjacent transpositions, or `limit + 1` once it is certainly above `limit`. */
export function editDistance(a: string, b: string, limit = Infinity): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev2: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, prev2[j - 2] + 1);
      cur.push(d);
      rowMin = Math.min(rowMin, d);
    }
    if (rowMin > limit) return limit + 1;
    prev2 = prev;
    prev = cur;
  }
  return prev[b.length];
}

/** Up to `max` candidates nearest to `word` (closest first, then by name); none when nothing is close. */
export function nearestNames(word: string, candidates: Iterable<string>, max = 3): string[] {
  const limit = Math.max(1, Math.floor(word.length / 3));
  const found = new Map<string, number>();
  for (const c of candidates) {
    if (c === word || found.has(c)) continue;
    const d = editDistance(word, c, limit);
    if (d <= limit) found.set(c, d);
  }
  return [...found].sort((x, y) => x[1] - y[1] || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)).slice(0, max).map(([n]) => n);
}

/** The symbol names of a table nearest to `name` (functions and objects; section and file symbols left out). */
export function similarSymbols(symbols: SymbolTable, name: string, max = 3): string[] {
  return nearestNames(name, symbols.all().filter(s => s.type !== 'section' && s.type !== 'file' && s.name !== '').map(s => s.name), max);
}

/** " (did you mean 'do_fork'?)" / " (did you mean 'a' or 'b'?)", or '' when no name is near. */
export function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return '';
  const q = names.map(n => `'${n}'`);
  const list = q.length === 1 ? q[0] : `${q.slice(0, -1).join(', ')} or ${q[q.length - 1]}`;
  return ` (did you mean ${list}?)`;
}
