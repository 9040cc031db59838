/**
 * Handler snippets of one probe file compiled once per text. A file of
 * thousands of probes often repeats the same handler (`pre { return 0; }`
 * on every probe): the second and later copies take the first one's
 * compiled closures instead of compiling (and keeping) their own.
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
 *   - everything else a compile reads (the handler kind, the register
 *     names, the image's symbols and types) is the same for the whole file.
 * What differs is where the text is: the copy's handler reports a fault at
 * its own line and column (the shared closures hold the first copy's
 * positions; a fault is moved by the difference, its column only on the
 * text's first line, the only line whose columns differ), and its
 * diagnostics and register-write spans are moved the same way.
 */
import type { SnippetAst, Span } from './ast';
import { compileSnippetAst, SnippetResult } from './compiler';
import { CompileOptions, CompiledHandler, Diagnostic, HandlerEnv, HandlerFault, HandlerKind, ProgramName } from './types';

/** where a snippet's text starts (its opening brace): line and column, 1-based */
export interface TextAt { line: number; column: number }

interface Shared {
  readonly r: SnippetResult;
  readonly at: TextAt;
}

/** The difference between two places of the same text. */
class Shift {
  constructor(
    /** the first copy's first line (a position on it also moves by dColumn) */
    readonly line0: number,
    readonly dLine: number,
    readonly dColumn: number,
  ) {}

  line(l: number): number { return l + this.dLine; }
  column(l: number, c: number): number { return l === this.line0 ? c + this.dColumn : c; }

  span<S extends Span>(s: S): S {
    return { ...s, line: this.line(s.line), column: this.column(s.line, s.column), endLine: this.line(s.endLine), endColumn: this.column(s.endLine, s.endColumn) };
  }
}

/** a copy's handler: the shared one, its faults at the copy's positions */
class MovedHandler implements CompiledHandler {
  constructor(private readonly inner: CompiledHandler, private readonly shift: Shift) {}

  get kind(): HandlerKind { return this.inner.kind; }

  run(env: HandlerEnv): bigint {
    try {
      return this.inner.run(env);
    } catch (e) {
      if (!(e instanceof HandlerFault)) throw e;
      const s = this.shift;
      throw new HandlerFault(e.kind, e.message, s.line(e.line), s.column(e.line, e.column), e.addr, e.access);
    }
  }
}

export class SnippetCache {
  private readonly byText = new Map<string, Shared>();

  /**
   * compileSnippetAst(ast, kind, opts, [], names) of the snippet whose text
   * (as written, from its opening to its closing brace) is `text`, placed
   * at `at`: shared with an earlier copy of the same text when that
   * copy's compile can be (see the file comment).
   */
  compile(text: string, at: TextAt, ast: SnippetAst, kind: HandlerKind, opts: CompileOptions,
    names: ((name: string) => ProgramName | undefined) | undefined): SnippetResult {
    const key = `${kind}\n${text}`;
    const hit = this.byText.get(key);
    if (hit !== undefined) return moved(hit, at);
    let asked = false;
    const tracked = names === undefined ? undefined : (name: string): ProgramName | undefined => { asked = true; return names(name); };
    const r = compileSnippetAst(ast, kind, opts, [], tracked);
    if (r.handler !== undefined && r.shareable && !asked) this.byText.set(key, { r, at });
    return r;
  }
}

function moved(s: Shared, at: TextAt): SnippetResult {
  const dLine = at.line - s.at.line, dColumn = at.column - s.at.column;
  if (dLine === 0 && dColumn === 0) return s.r;
  const shift = new Shift(s.at.line, dLine, dColumn);
  const r = s.r;
  const diagnostics: Diagnostic[] = r.diagnostics.map(d => shift.span(d));
  const regWrites = new Map<string, Span>();
  for (const [reg, span] of r.regWrites) regWrites.set(reg, shift.span(span));
  return { handler: new MovedHandler(r.handler as CompiledHandler, shift), diagnostics, used: r.used, regWrites, shareable: false };
}
