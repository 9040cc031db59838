/**
 * Prints the import figures of the layering: the adapter's imports of
 * emulator/ by folder (value and type-only), the imports between emulator
 * folders, and the import cycles (with and without type-only imports).
 * Run: npx tsc -p . && node out/test/structure/importReport.js
 */
import { repoRoot } from '../util/paths';
import { cycles, importEdges, unitOf } from './importGraph';

const root = repoRoot();
const edges = importEdges(root, ['adapter', 'extension', 'emulator']);
const count = (pred: (e: (typeof edges)[number]) => boolean) => {
  const m = new Map<string, [number, number]>();
  for (const e of edges) {
    if (!pred(e)) continue;
    const k = `${unitOf(e.from)} -> ${unitOf(e.to)}`;
    const c = m.get(k) ?? [0, 0];
    c[e.typeOnly ? 1 : 0]++;
    m.set(k, c);
  }
  return [...m].sort((a, b) => a[0].localeCompare(b[0]));
};
const adapter = count(e => e.from.startsWith('adapter/') && e.to.startsWith('emulator/'));
const total = adapter.reduce((s, [, c]) => [s[0] + c[0], s[1] + c[1]], [0, 0]);
console.log(`adapter -> emulator: ${total[0] + total[1]} imports (${total[0]} value, ${total[1]} type-only)`);
for (const [k, c] of adapter) console.log(`  ${k.replace('adapter -> ', '').padEnd(32)} ${String(c[0]).padStart(3)} value ${String(c[1]).padStart(3)} type`);
console.log('\nbetween emulator folders (value / type-only):');
for (const [k, c] of count(e => e.from.startsWith('emulator/') && e.to.startsWith('emulator/') && unitOf(e.from) !== unitOf(e.to))) {
  console.log(`  ${k.padEnd(58)} ${c[0]} / ${c[1]}`);
}
for (const withTypes of [true, false]) {
  const cs = cycles(edges, { withTypes });
  console.log(`\ncycles ${withTypes ? 'counting type-only imports' : 'of value imports'}: ${cs.length}` +
    `${cs.length ? ` (biggest ${cs[0].length} files)` : ''}`);
  for (const c of cs) {
    const units = [...new Set(c.map(unitOf))];
    console.log(`  ${String(c.length).padStart(3)} files in ${units.join(', ')}${units.length === 1 ? '' : '  <- across folders'}`);
  }
}
