/**
 * A .kprobe file is parsed from its tokens as they are read (Lexer, Parser
 * stream/drop): the tokens a parse asks for in pieces must be exactly what
 * tokenize gives at once, and the streamed parse must give exactly the AST
 * and diagnostics of a parse of all the tokens, on every probe file and
 * handler source of the repository, on random soups of probe-file words
 * and on files longer than the window the parse keeps.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Lexer, Token, tokenize } from '../../emulator/handlers/lexer';
import { parseProbeFile } from '../../emulator/handlers';
import { repoPath } from '../util/paths';
import { mulberry32 as prng } from '../util/prng';

const rand = prng(0x73747265);
const int = (n: number): number => Math.floor(rand() * n);
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];

/** probe-file words, handler words and the characters that start comments, strings and errors */
const WORDS = [
  'kprobe', 'kretprobe', 'jprobe', 'kwatch', 'uprobe', 'batch', 'image', '"k.elf"', 'pre', 'post', 'fault', 'entry', 'return',
  'do_fork', 'do_fork+0x4', 'do_fork + 4', 'sym@0x10', '0xffffffff81000000', 'fork.c:32', '/bin/app:0x1136', 'maxactive=20', 'maxactive=-1',
  'data_size=8', 'disabled', 'len=8', 'type=w', 'p:myprobe', 'r:ret', 'p', 'r2:', '-:myprobe', 'do_sys_open', 'dfd=%di', '$retval',
  '{', '}', '(', ')', ';', ',', '=', '+', '-', '->', '<<=', '...', 'int', 'x', 'y', 'if', 'else', 'while', 'printk', '"%d\\n"', "'a'", "'ab'",
  '0', '1', '0x10UL', '077', '089', '1.5', '.5', '12ab', '/*', '*/', '//', '\n', '\n', '\t', '"', "'", '@', '#', '\\', 'é', '"\\x41\\777"',
];

function soup(n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += pick(WORDS) + (rand() < 0.75 ? ' ' : '');
  return s;
}

/** tokenize's result read through a Lexer in random pieces */
function inPieces(src: string, line: number, column: number): Token[] {
  const lexer = new Lexer(src, line, column);
  const out: Token[] = [];
  while (!lexer.done) lexer.fill(out, out.length + 1 + int(rand() < 0.5 ? 3 : 300));
  return out;
}

/** the repository's probe files and handler sources (git's list: no build output, no caches) */
function repoSources(): { name: string; text: string }[] {
  const files = execFileSync('git', ['ls-files', '*.kprobe', '*.kp', 'examples/**/*.c'], { cwd: repoPath(), encoding: 'utf8' })
    .split('\n').filter(Boolean);
  return files.map(f => ({ name: f, text: readFileSync(repoPath(f), 'utf8') }));
}

function sameParse(text: string, name: string): void {
  const streamed = parseProbeFile(text, name);
  const whole = parseProbeFile(text, name, undefined, tokenize(text));
  assert.deepStrictEqual(streamed, whole, name);
}

describe('tokens read in pieces (Lexer)', () => {
  test('equal tokenize on 3,000 random sources, any piece sizes and start positions', () => {
    for (let k = 0; k < 3000; k++) {
      const src = soup(1 + int(60));
      const line = 1 + int(5), column = 1 + int(5);
      assert.deepStrictEqual(inPieces(src, line, column), tokenize(src, line, column), JSON.stringify(src));
    }
  });

  test('tokenize with a token limit: the prefix, then eof', () => {
    for (let k = 0; k < 500; k++) {
      const src = soup(1 + int(40));
      const all = tokenize(src);
      const max = int(all.length + 2);
      const cut = tokenize(src, 1, 1, max);
      if (all.length <= max + 1) assert.deepStrictEqual(cut, all, JSON.stringify(src));
      else {
        assert.deepStrictEqual(cut.slice(0, max + 1), all.slice(0, max + 1), JSON.stringify(src));
        assert.equal(cut.length, max + 2);
        assert.equal(cut[max + 1].kind, 'eof');
      }
    }
  });

  test('every probe file and handler source of the repository', () => {
    const sources = repoSources();
    assert.ok(sources.filter(s => s.name.endsWith('.kprobe')).length >= 10, 'the repository\'s probe files were found');
    for (const s of sources) assert.deepStrictEqual(inPieces(s.text, 1, 1), tokenize(s.text), s.name);
  });
});

describe('a probe file parsed as its tokens are read', () => {
  test('every probe file and handler source of the repository: the AST and diagnostics of the whole-token parse', () => {
    for (const s of repoSources()) sameParse(s.text, s.name);
  });

  test('3,000 random soups of probe-file words', () => {
    for (let k = 0; k < 3000; k++) sameParse(soup(1 + int(80)), `soup${k}.kprobe`);
  });

  test('files longer than the parse keeps: many probes, long bodies, batches, events and errors between them', () => {
    const parts = [
      (i: number) => `kprobe do_fork+0x${i.toString(16)} { pre { return 0; } }\n`,
      (i: number) => `kretprobe f${i} maxactive=${i % 7} { entry { int x = ${i}; return 0; } return { printk("%d\\n", x); } }\n`,
      () => `jprobe do_fork { ${'x = 1; '.repeat(int(400))} }\n`,
      () => `batch { ${'kprobe a { } '.repeat(1 + int(300))} }\n`,
      (i: number) => `p:ev${i} do_sys_open dfd=%di\n`,
      () => `${soup(1 + int(30))}\n`,
      () => '/* a comment\n over lines */ // and one to the end\n',
      () => `kprobe do_fork { pre { if (x) { ${'{ '.repeat(int(50))} } } }\n`,
    ];
    for (let k = 0; k < 40; k++) {
      let text = rand() < 0.5 ? 'image "k.elf"\n' : '';
      const n = 50 + int(400);
      for (let i = 0; i < n; i++) text += pick(parts)(i);
      if (rand() < 0.3) text += soup(20); // an unfinished end
      sameParse(text, `long${k}.kprobe`);
    }
  });
});
