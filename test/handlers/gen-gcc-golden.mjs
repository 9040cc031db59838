// Regenerates test/handlers/golden/c-semantics.json: random integer
// expressions over variables of many C types, evaluated by gcc (-fwrapv, as
// the kernel builds) on x86_64. The handler language must print the same.
//   node test/handlers/gen-gcc-golden.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

let seed = 20240611;
const rnd = n => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
const vars = [['a', 'int', '-5'], ['b', 'unsigned int', '4000000000u'], ['c', 'long', '-123456789012L'], ['d', 'unsigned long', '0xfedcba9876543210UL'],
  ['e', 'short', '-300'], ['f', 'unsigned char', '200'], ['g', 'signed char', '-100'], ['h', 'unsigned short', '65000'], ['i', 'long long', '7'], ['j', 'u32', '0x80000001u']];
const lits = ['0', '1', '-1', '0x7fffffff', '0xffffffffu', '2147483648', '-2147483647', '0x80000000', '255', '3UL', '-3L', '65535', "'\\xff'", '017'];
function ex(depth) {
  if (depth <= 0 || rnd(4) === 0) return rnd(2) ? vars[rnd(vars.length)][0] : lits[rnd(lits.length)];
  const a = ex(depth - 1), b = ex(depth - 1);
  switch (rnd(15)) {
    case 0: return `(${a} + ${b})`; case 1: return `(${a} - ${b})`; case 2: return `(${a} * ${b})`;
    case 3: return `(${a} / ((${b} & 0xff) | 1))`; case 4: return `(${a} % ((${b} & 0xff) | 1))`;
    case 5: return `(${a} << (${b} & 7))`; case 6: return `(${a} >> (${b} & 7))`;
    case 7: return `(${a} < ${b})`; case 8: return `(${a} == ${b})`; case 9: return `(${a} & ${b})`;
    case 10: return `(${a} ^ ~${b})`; case 11: return `(${a} ? ${b} : -${a})`;
    case 12: { const t = ['u8', 's8', 'u16', 's16', 'int', 'unsigned', 'long', 'unsigned long', 'bool'][rnd(9)]; return `((${t})${a})`; }
    case 13: return `(${a} > ${b} || ${b} <= ${a})`;
    default: return `(${a} >= ${b})`;
  }
}
const decls = vars.map(([n, t, v]) => `${t} ${n} = ${v};`).join(' ');
const exprs = [];
for (let k = 0; k < 400; k++) exprs.push(ex(4));
const dir = mkdtempSync(join(tmpdir(), 'kprobe-golden-'));
try {
  const src = '#include <stdio.h>\n#include <stdbool.h>\ntypedef unsigned char u8; typedef signed char s8; typedef unsigned short u16; typedef short s16; typedef unsigned int u32;\n' +
    `int main(void) { ${decls}\n` + exprs.map(e => `printf("%llx %d\\n", (unsigned long long)(${e}), (int)sizeof(${e}));`).join('\n') + '\nreturn 0; }\n';
  writeFileSync(join(dir, 't.c'), src);
  execFileSync('gcc', ['-fwrapv', '-funsigned-char', '-w', '-O0', '-o', join(dir, 't'), join(dir, 't.c')]);
  const out = execFileSync(join(dir, 't'), { encoding: 'utf8' }).trim().split('\n');
  const cases = exprs.map((expr, k) => ({ expr, gcc: out[k] }));
  const here = dirname(fileURLToPath(import.meta.url));
  writeFileSync(join(here, 'golden', 'c-semantics.json'), JSON.stringify({ generator: 'gcc -fwrapv -funsigned-char x86_64', charSigned: false, decls, cases }, null, 1) + '\n');
  console.log(`wrote ${cases.length} cases`);
} finally { rmSync(dir, { recursive: true, force: true }); }
