#!/usr/bin/env node
// Writes what gdb says of the names in scope at a source line of an example
// image, as the golden test/adapter/gdbScope.test.ts compares the Variables
// view with:
//
//   node scripts/gdb-scope-golden.mjs [IMAGE] [FILE:LINE] [OUT]
//   (defaults: examples/kernel/build/kernel-x86_64.elf, the fork.c line
//    marked /* #BP do_fork_body */, test/fixtures/gdb/kernel-x86_64.do_fork_body.json)
//
// gdb-multiarch's `info line` gives the line's first address, `info scope`
// every parameter and local there with its location ranges; a name is
// "optimized out" at that address when no range covers it (gdb prints
// `<optimized out>` for it when stopped there), else the register or
// expression gdb reads it from. The image's sha256 is recorded: the test
// names it when the image was rebuilt since (run this script again then).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const image = resolve(process.argv[2] ?? `${repo}/examples/kernel/build/kernel-x86_64.elf`);
const marked = readFileSync(`${repo}/examples/kernel/fork.c`, 'utf8').split('\n').findIndex(l => l.includes('/* #BP do_fork_body */')) + 1;
const where = process.argv[3] ?? `fork.c:${marked}`;
const out = resolve(process.argv[4] ?? `${repo}/test/fixtures/gdb/kernel-x86_64.do_fork_body.json`);

const gdb = execFileSync('gdb-multiarch', ['-nx', '-batch', '-ex', `info line ${where}`, '-ex', `info scope ${where}`, image], { encoding: 'utf8' });
const line = /starts at address (0x[0-9a-f]+) <([\w.]+)\+(\d+)>/.exec(gdb);
if (!line) throw new Error(`gdb did not place ${where}:\n${gdb}`);
const pc = BigInt(line[1]);
const symbols = [];
for (const block of gdb.split(/^Symbol /m).slice(1)) {
  const name = /^(\w+)/.exec(block)[1];
  let at = 'optimized out';
  const single = /^\w+ is (a variable in \$\w+|a variable at frame base reg \$\w+ offset \S+|static storage at address \S+)/.exec(block);
  if (single) at = single[1];
  for (const r of block.matchAll(/Range (0x[0-9a-f]+)-(0x[0-9a-f]+): (.*)/g)) {
    if (BigInt(r[1]) <= pc && pc < BigInt(r[2])) at = r[3].replace(/:$/, '');
  }
  symbols.push({ name, at });
}
const golden = {
  generatedBy: 'node scripts/gdb-scope-golden.mjs (gdb-multiarch: info line, info scope)',
  image: relative(repo, image),
  sha256: createHash('sha256').update(readFileSync(image)).digest('hex'),
  line: where,
  function: line[2],
  offset: Number(line[3]),
  symbols,
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(golden, null, 2) + '\n');
process.stdout.write(`${relative(repo, out)}: ${symbols.map(s => `${s.name} (${s.at})`).join(', ')}\n`);
