/**
 * Handler snippets of one probe file compiled once per text. A file of
 * thousands of probes often repeats the same handler (`pre { return 0; }`
 * on every probe): the second and later copies take the first one's
 * compiled closures instead of compiling (and keeping) their own, and the
 * parser takes the first copy's statements instead of parsing them again
 * (parseProbeFileTaking's `known`).
 *
 * A compiled snippet is the same for two copies of its text when nothing
 * it compiled to depends on the place of the probe or keeps state of its
 * own:
 *   - it did not look up a name of the probed program (DWARF names are
 *     those in scope at the probe's pc): the lookup is tracked, and a
 *     compile that asked is never shared;
 *   - it declares no static variable (a handler's statics are its own,
 *     kept across its runs); its string literals are interned at compile
 *     time only (the pool is never written at run time) and are shared;
 *   - its text parsed without a diagnostic (the parser's recovery is not
 *     shared);
 *   - everything else a compile reads (the handler kind, the register
 *     names, the image's symbols and types) is the same for the whole file.
 * What differs is where the text is: the copy's handler reports a fault at
 * its own line and column (the shared closures hold the first copy's
 * positions; a fault is moved by the difference, its column only on the
 * text's first line, the only line whose columns differ), and its
 * diagnostics and register-write spans are moved the same way. The shared
 * statements are only ever compiled as the first copy (their spans are the
 * first copy's).
 */
import type { SnippetAst, Span, Stmt } from './ast';
import { compileSnippetAst, SnippetResult } from './compiler';
import { CompileOptions, CompiledHandler, Diagnostic, HandlerEnv, HandlerFault, HandlerKind, ProgramName } from './types';

/** where a snippet's text is in the file: [start, end) offsets and the line and column of its start (its opening brace) */
export interface TextAt { start: number; end: number; line: number; column: number }

/** what the parser may take instead of parsing a handler body again: its statements, its text and how many tokens it is */
export interface KnownBody {
  readonly stmts: Stmt[];
  /** from the opening to the closing brace */
  readonly text: string;
  readonly tokens: number;
}

/** a text compiled and shared: the first copy's result and place, and what the parser may take */
interface Shared extends KnownBody {
  readonly kind: HandlerKind;
  readonly r: SnippetResult;
  readonly at: TextAt;
}

/** shared texts of one length at most, and texts the parser looks for (a file of as many distinct handlers as probes keeps no long list to look through) */
const PER_LENGTH = 8;
const PARSER_KNOWS = 16;

/** a copy's handler: the shared one, its faults at the copy's positions */
class MovedHandler implements CompiledHandler {
  constructor(
    private readonly inner: CompiledHandler,
    /** the first copy's first line (a position on it also moves by dColumn) */
    private readonly line0: number,
    private readonly dLine: number,
    private readonly dColumn: number,
  ) {}

  get kind(): HandlerKind { return this.inner.kind; }

  run(env: HandlerEnv): bigint {
    try {
      return this.inner.run(env);
    } catch (e) {
      if (!(e instanceof HandlerFault)) throw e;
      const column = e.line === this.line0 ? e.column + this.dColumn : e.column;
      throw new HandlerFault(e.kind, e.message, e.line + this.dLine, column, e.addr, e.access);
    }
  }
}

export class SnippetCache {
  /** by text length: the shared texts of that length */
  private readonly byLength = new Map<number, Shared[]>();
  /** the first shared texts, which the parser looks for */
  private readonly first: Shared[] = [];

  constructor(
    /** the file's text (the snippets' texts are compared where they are, not sliced) */
    private readonly file: string,
  ) {}

  /** the shared text of `kind` (any kind when undefined) written at `at.start` with length `len` */
  private find(start: number, len: number, kind: HandlerKind | undefined): Shared | undefined {
    const list = this.byLength.get(len);
    if (list === undefined) return undefined;
    for (const s of list) if ((kind === undefined || s.kind === kind) && this.file.startsWith(s.text, start)) return s;
    return undefined;
  }

  /**
   * The statements of a shared `kind` text that starts at `start` (its
   * opening brace), for the parser: their compile for this copy will be
   * the shared one (never a compile of the first copy's statements here).
   */
  knownBody(kind: string, start: number): KnownBody | undefined {
    for (const s of this.first) if (s.kind === kind && this.file.startsWith(s.text, start)) return s;
    return undefined;
  }

  /**
   * compileSnippetAst(ast, kind, opts, [], names()) of the snippet at `at`
   * (`stmts`: its statements, `tokens`: how many tokens from its opening to
   * its closing brace), shared with an earlier copy of the same text when
   * that copy's compile can be (see the file comment). `names` is asked
   * only when the snippet is compiled.
   */
  compile(at: TextAt, tokens: number, ast: SnippetAst, stmts: Stmt[], kind: HandlerKind, opts: CompileOptions,
    names: () => ((name: string) => ProgramName | undefined) | undefined): SnippetResult {
    const len = at.end - at.start;
    const hit = this.find(at.start, len, kind);
    if (hit !== undefined) return moved(hit, at);
    const ns = names();
    let asked = false;
    const tracked = ns === undefined ? undefined : (name: string): ProgramName | undefined => { asked = true; return ns(name); };
    const r = compileSnippetAst(ast, kind, opts, [], tracked);
    if (r.handler !== undefined && r.shareable && !asked) {
      let list = this.byLength.get(len);
      if (list === undefined) this.byLength.set(len, list = []);
      if (list.length < PER_LENGTH) {
        const sh: Shared = { kind, text: this.file.slice(at.start, at.end), r, at, stmts, tokens };
        list.push(sh);
        if (this.first.length < PARSER_KNOWS) this.first.push(sh);
      }
    }
    return r;
  }
}

function moved(s: Shared, at: TextAt): SnippetResult {
  const dLine = at.line - s.at.line, dColumn = at.column - s.at.column;
  const r = s.r;
  if (dLine === 0 && dColumn === 0) return r;
  const line0 = s.at.line;
  // nothing to move (the usual case): the first copy's empty lists, read only
  let diagnostics: Diagnostic[] = r.diagnostics;
  let regWrites = r.regWrites;
  if (diagnostics.length > 0 || regWrites.size > 0) {
    const line = (l: number): number => l + dLine;
    const column = (l: number, c: number): number => (l === line0 ? c + dColumn : c);
    const span = <S extends Span>(x: S): S => ({ ...x, line: line(x.line), column: column(x.line, x.column), endLine: line(x.endLine), endColumn: column(x.endLine, x.endColumn) });
    diagnostics = diagnostics.map(span);
    const m = new Map<string, Span>();
    for (const [reg, sp] of regWrites) m.set(reg, span(sp));
    regWrites = m;
  }
  return { handler: new MovedHandler(r.handler as CompiledHandler, line0, dLine, dColumn), diagnostics, used: r.used, regWrites, shareable: false };
}
