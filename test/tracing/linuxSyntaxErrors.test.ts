/**
 * Linux's own kprobe_events / uprobe_events syntax-error selftests as the
 * oracle of the definition parser (emulator/tracing/events/parse.ts): every
 * `check_error` case of Linux 6.1's
 * tools/testing/selftests/ftrace/test.d/kprobe/{kprobe,uprobe}_syntax_errors.tc
 * marks with '^' where Linux's error_log puts its caret; our error must be
 * at that column, with Linux's message (the ERRORS table of
 * kernel/trace/trace_probe.h, keyed by the code each case names in its
 * comment).
 *
 * The .tc files run unmodified under /bin/sh (set -e, as ftracetest runs
 * them) in a scratch directory standing for the tracing directory: README
 * is our parser's README section (readme.ts), ../kprobes/list is empty (no
 * probe is FTRACE-optimized here), and ftracetest's ftrace_errlog_check is
 * replaced by one that hands us the command and the kprobe_events /
 * uprobe_events content of that moment (the events the multi-probe cases
 * append to). A case the shell does not reach sits behind a feature guard
 * our README does not claim: it is reported as unsupported, by line.
 *
 * The files come from Debian's linux-source-6.1
 * (test/modules/linux/fetch-test-kprobes.sh); without them the tests
 * skip, except in CI, which fetches them first.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  appendError, linuxErrorMessage, parseEventDefinition, probeEventsReadme,
} from '../../emulator/tracing/events';
import type { EventAdd, EventParseOptions } from '../../emulator/tracing/events';
import { PORTS } from '../../emulator/ports';
import { repoPath } from '../util/paths';
import { unfetched } from '../util/fetched';

const SRC = repoPath('test', 'modules', 'linux', 'cache', 'linux-source-6.1');
const FTRACE = join(SRC, 'tools', 'testing', 'selftests', 'ftrace');
const TRACE_PROBE_H = join(SRC, 'kernel', 'trace', 'trace_probe.h');
const FILES = ['kprobe_syntax_errors.tc', 'uprobe_syntax_errors.tc'];
const HOWTO = 'run test/modules/linux/fetch-test-kprobes.sh (needs apt)';
const x86 = PORTS.find(p => p.name === 'x86_64')!;

/**
 * The machine the selftests assume: the kernel functions they name exist
 * (ftracetest's FUNCTION_FORK is kernel_clone on 6.1), non_exist_func does
 * not; /bin/sh is a regular file, /sys a directory, /non_exist_file nothing.
 */
const FUNCTION_FORK = 'kernel_clone';
const KERNEL_FUNCTIONS = new Set(['vfs_read', 'do_exit', FUNCTION_FORK]);
const FILESYSTEM: Record<string, 'file' | 'other'> = { '/bin/sh': 'file', '/sys': 'other' };
const ENV: EventParseOptions = {
  arch: x86,
  symbolCount: name => (KERNEL_FUNCTIONS.has(name) ? 1 : 0),
  fileKind: path => FILESYSTEM[path],
};

/** one check_error call as written in the .tc file */
interface StaticCase { line: number; literal: string; code: string }
/** one the shell reached: the command with its '^', and the events file's content then */
interface Reached { marked: string; events: string }

function missing(t: { skip(msg: string): void }, why: string): void {
  unfetched(t, why);
}

/** Linux's ERRORS table: code -> message (the C(CODE, "text") entries of trace_probe.h) */
function linuxErrors(): Map<string, string> {
  const m = new Map<string, string>();
  for (const e of readFileSync(TRACE_PROBE_H, 'utf8').matchAll(/C\(([A-Z_]+),\s*"((?:[^"\\]|\\.)*)"\)/g)) {
    m.set(e[1], e[2].replace(/\\(.)/g, '$1'));
  }
  return m;
}

/** one edit (a letter changed, added or dropped) turns a into b */
function oneEdit(a: string, b: string): boolean {
  if (Math.abs(a.length - b.length) > 1 || a === b) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return a.slice(i + 1) === b.slice(i + 1) || a.slice(i) === b.slice(i + 1) || a.slice(i + 1) === b.slice(i);
}

/** the ERRORS code a case's comment names, read past a one-letter slip (the .tc writes ARG_NAME_TOO_LOG for ARG_NAME_TOO_LONG) */
function codeOf(written: string, errors: Map<string, string>): string | undefined {
  if (errors.has(written)) return written;
  const near = [...errors.keys()].filter(k => oneEdit(written, k));
  return near.length === 1 ? near[0] : undefined;
}

/** the check_error calls of a .tc file, with the error code their comment names */
function staticCases(text: string): StaticCase[] {
  const out: StaticCase[] = [];
  text.split('\n').forEach((l, i) => {
    const m = /(?:^\s*|[;&|]\s*)check_error\s+('([^']*)'|"((?:[^"\\]|\\.)*)")/.exec(l);
    if (!m) return;
    const code = /#\s*([A-Z_]+)/.exec(l.slice(m.index + m[0].length))?.[1] ?? '';
    // the shell's view of the word: single quotes literal; double quotes expand $FUNCTION_FORK and \\ \" \$
    const literal = m[2] ?? m[3].replace(/\$FUNCTION_FORK/g, FUNCTION_FORK).replace(/\\([\\"$])/g, '$1');
    out.push({ line: i + 1, literal, code });
  });
  return out;
}

/** run the .tc file under sh in a scratch tracing directory; the cases it reaches, in order */
function runTc(file: string): Reached[] {
  const root = mkdtempSync(join(tmpdir(), 'kprobe-ftrace-'));
  try {
    const dir = join(root, 'tracing');
    mkdirSync(dir);
    mkdirSync(join(root, 'kprobes'));
    writeFileSync(join(root, 'kprobes', 'list'), '');
    writeFileSync(join(dir, 'README'), probeEventsReadme());
    for (const f of ['kprobe_events', 'uprobe_events', 'error_log']) writeFileSync(join(dir, f), '');
    const script = [
      'set -e',
      `FUNCTION_FORK=${FUNCTION_FORK}`,
      // ftracetest's checker, replaced: hand the command (with its '^') and the events file's content to the test
      'ftrace_errlog_check() { printf "%s\\036%s\\035" "$2" "$(cat "$3")"; return 0; }',
      `. '${join(FTRACE, 'test.d', 'kprobe', file)}'`,
    ].join('\n');
    const r = spawnSync('sh', ['-c', script], { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, `sh ${file}: ${r.stderr}`);
    return r.stdout.split('\x1d').filter(s => s).map(s => {
      const [marked, events] = s.split('\x1e');
      return { marked, events };
    });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

/** the events an events file's content defines (what a new definition with the same name appends to) */
function existingEvents(content: string): EventAdd[] {
  const out: EventAdd[] = [];
  for (const line of content.split('\n')) {
    if (!line.trim()) continue;
    const r = parseEventDefinition(line, ENV);
    assert.ok(r.ok, `events file line '${line}': ${r.ok ? '' : r.error.message}`);
    if (r.cmd.op === 'add') out.push(r.cmd);
  }
  return out;
}

/** our error for a command: column and message as Linux's error_log would show them, or 'accepted' */
function ourError(cmd: string, events: string): { column: number; message: string } | 'accepted' {
  const r = parseEventDefinition(cmd, ENV);
  if (!r.ok) return { column: r.error.column, message: linuxErrorMessage(r.error) };
  if (r.cmd.op !== 'add') return 'accepted';
  const e = appendError(r.cmd, existingEvents(events));
  return e ? { column: e.column, message: linuxErrorMessage(e) } : 'accepted';
}

const available = existsSync(join(FTRACE, 'test.d', 'kprobe', FILES[0])) && existsSync(TRACE_PROBE_H);

describe("Linux 6.1's kprobe/uprobe syntax-error selftests: Linux's error column and message", () => {
  if (!available) {
    test('the selftests are fetched', t => missing(t, `no ${FTRACE}: ${HOWTO}`));
    return;
  }
  const errors = linuxErrors();

  test("our error texts are Linux's ERRORS table", () => {
    assert.ok(errors.size > 50, `trace_probe.h: ${errors.size} ERRORS entries`);
    for (const [code, text] of errors) {
      assert.equal(linuxErrorMessage({ column: 1, message: '?', code }), text, code);
    }
  });

  for (const file of FILES) {
    describe(file, () => {
      const cases = staticCases(readFileSync(join(FTRACE, 'test.d', 'kprobe', file), 'utf8'));
      const reached = runTc(file);
      // the reached cases are a subsequence of the written ones, in file order
      const at = new Map<StaticCase, Reached>();
      let k = 0;
      for (const r of reached) {
        while (k < cases.length && cases[k].literal !== r.marked) k++;
        assert.ok(k < cases.length, `${file}: the shell reached '${r.marked}', which no check_error line writes`);
        at.set(cases[k++], r);
      }
      let matched = 0;
      let columns = 0;
      for (const c of cases) {
        const r = at.get(c);
        if (!r) continue;
        const cmd = r.marked.replace(/\^/g, '');
        const column = r.marked.lastIndexOf('^') + 1;
        const code = codeOf(c.code, errors);
        const text = code !== undefined ? errors.get(code) : undefined;
        const got = ourError(cmd, r.events);
        const ok = got !== 'accepted' && got.column === column && (text === undefined || got.message === text);
        if (ok) matched++;
        if (got !== 'accepted' && got.column === column) columns++;
        test(`line ${c.line} ${c.code || '(no code)'}: ${r.marked}`, () => {
          assert.notEqual(got, 'accepted', `${cmd}: accepted; Linux says ${c.code} at column ${column}`);
          if (got === 'accepted') return;
          assert.equal(got.column, column, `${cmd}: our column ${got.column} (${got.message}), Linux's ${column} (${c.code})`);
          if (text !== undefined) assert.equal(got.message, text, `${cmd}: ${c.code}`);
        });
      }
      const unsupported = cases.filter(c => !at.has(c));
      test(`${file}: counts`, () => {
        console.log(`# ${file}: ${matched}/${reached.length} reached cases match Linux's column and message, ${columns}/${reached.length} the column `
          + `(of ${cases.length} written); `
          + `unsupported (behind a feature guard our README or kprobes/list does not satisfy): ${unsupported.length}`
          + unsupported.map(c => `\n#   line ${c.line} ${c.code}: ${c.literal}`).join(''));
        for (const c of cases) {
          const code = codeOf(c.code, errors);
          if (code === undefined) console.log(`#   line ${c.line}: '${c.code}' is not in trace_probe.h's ERRORS (position checked only)`);
          else if (code !== c.code) console.log(`#   line ${c.line}: '${c.code}' read as ${code}`);
        }
        assert.equal(reached.length + unsupported.length, cases.length);
      });
    });
  }
});
