/**
 * The one place the language server talks to the handler language
 * (emulator/handlers/). Everything else in the server uses these functions,
 * so a change in that API is absorbed here.
 */
import type { ProbeKeyword } from './cursorContext';
import { BUILTIN_DOCS, CONTEXT_VARIABLE_DOCS, HANDLER_KIND_DOCS } from './docs';

export type { ProbeKeyword };

/** A problem found in a document; positions 1-based, end exclusive. */
export interface LangDiagnostic {
  message: string;
  severity: 'error' | 'warning';
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export interface AnalysisOptions {
  regNames: string[];
  /** false when the architecture has no register table: register names are then not reported */
  regsKnown: boolean;
  /** absent when no image is available: symbols are then not checked */
  symbolExists?: (name: string) => boolean;
  /** a function symbol of the image (handlers may call it) */
  functionExists?: (name: string) => boolean;
  /** names of the image close to a misspelled symbol ("did you mean") */
  similarSymbols?: (name: string) => string[];
  imageArch?: string;
  /**
   * The "inside an instruction" message for a probe address (symbol+offset
   * or 0xaddress targets), undefined on a boundary; absent: not checked
   */
  insnSplit?: (target: { kind: 'symbol'; name: string; offset: bigint } | { kind: 'address'; addr: bigint }) => string | undefined;
  /** the program's names (DWARF) at a probe's target, its globals and types: as the emulator compiles handlers */
  programNamesFor?: CheckOptions['programNamesFor'];
  programGlobals?: CheckOptions['programGlobals'];
  programType?: CheckOptions['programType'];
}

export interface BuiltinInfo { name: string; signature: string; doc: string }
export interface HandlerKindInfo { name: string; doc: string }
export interface VariableInfo { name: string; type: string; doc: string }

export const CONTEXT_OBJECTS = ['p', 'ri', 'current'] as const;
export type ContextObject = typeof CONTEXT_OBJECTS[number];

export const C_TYPES = ['int', 'long', 'short', 'char', 'unsigned', 'signed', 'bool', 'void',
  'u8', 'u16', 'u32', 'u64', 's8', 's16', 's32', 's64'];
export const C_KEYWORDS = ['if', 'else', 'while', 'for', 'break', 'continue', 'return', 'sizeof'];

import {
  BUILTINS, HANDLER_KINDS, contextFields, parseProbeFile, checkProbeFile, MAX_MAXACTIVE, MAX_DATA_SIZE, MAX_KWATCH_LEN, type HandlerKind, type CheckOptions,
} from '../../emulator/handlers';

/** Handler kinds a probe block of this kind may contain. */
const KINDS_BY_PROBE: Readonly<Record<ProbeKeyword, readonly HandlerKind[]>> = {
  kprobe: ['pre', 'post', 'fault'],
  kretprobe: ['entry', 'return'],
  jprobe: [],
  uprobe: ['pre', 'fault'],
  uretprobe: ['entry', 'return'],
  kwatch: [],
};

/** The language's builtin functions, with this server's hover text where it has one. */
export function builtins(): BuiltinInfo[] {
  return BUILTINS.map(b => ({ name: b.name, signature: b.signature, doc: BUILTIN_DOCS[b.name] ?? b.doc }));
}

export function handlerKindsFor(probe: ProbeKeyword): HandlerKindInfo[] {
  return KINDS_BY_PROBE[probe].map(k => {
    const info = HANDLER_KINDS.find(h => h.name === k);
    return { name: k, doc: HANDLER_KIND_DOCS[k] ?? info?.doc ?? '' };
  });
}

function asKind(handler: string): HandlerKind | undefined {
  return (HANDLER_KINDS.find(h => h.name === handler)?.name);
}

/** Context variables visible in a handler of this kind (regs fields excluded). */
export function contextVariables(handler: string): VariableInfo[] {
  const kind = asKind(handler);
  if (!kind) return [];
  return contextFields(kind, []).map(v => ({ name: v.name, type: v.type, doc: CONTEXT_VARIABLE_DOCS[v.name] ?? v.doc }));
}

/** Fields of p / ri / current in a handler of this kind (none when the variable is not available there). */
export function fieldsOf(obj: ContextObject, handler: string): VariableInfo[] {
  const kind = asKind(handler) ?? 'log';
  const v = contextFields(kind, []).find(c => c.name === obj);
  return (v?.fields ?? []).map(f => ({ name: f.name, type: f.type, doc: f.doc }));
}

/** Syntax and semantic diagnostics of a whole .kprobe document. */
export function analyze(text: string, fileName: string, opts: AnalysisOptions): LangDiagnostic[] {
  const parsed = parseProbeFile(text, fileName, opts.programType);
  let semantic = checkProbeFile(parsed.file, {
    regNames: opts.regNames, symbolExists: opts.symbolExists, functionExists: opts.functionExists, similarSymbols: opts.similarSymbols, imageArch: opts.imageArch,
    programNamesFor: opts.programNamesFor, programGlobals: opts.programGlobals, programType: opts.programType,
  });
  // without a register table every register would be "unknown": drop those (the server warns once on the image line instead)
  if (!opts.regsKnown) semantic = semantic.filter(d => !REGISTER_DEPENDENT.some(re => re.test(d.message)));
  return [...parsed.diagnostics, ...semantic, ...insnSplitWarnings(parsed.file.probes, opts)];
}

/**
 * A kprobe whose address splits an instruction (a breakpoint there would
 * corrupt it) is a warning on its target (registered anyway by default, as
 * Linux 2.6 does on x86; -EILSEQ under the insnBoundary 'reject' setting).
 */
function insnSplitWarnings(probes: readonly { kind: string; target?: ProbeTargetAst; targetSpan: LangSpan }[], opts: AnalysisOptions): LangDiagnostic[] {
  const check = opts.insnSplit;
  if (!check) return [];
  const out: LangDiagnostic[] = [];
  for (const p of probes) {
    const t = p.target;
    if (p.kind !== 'kprobe' || !t || t.kind === 'line' || t.kind === 'user' || (t.kind === 'symbol' && t.offset === 0n)) continue;
    const msg = check(t);
    if (msg) {
      out.push({
        message: `${msg}: the probe is registered as on Linux 2.6 (its breakpoint corrupts the instruction and is never hit); `
          + 'the "insnBoundary": "reject" setting refuses it with -EILSEQ as today\'s kernels do',
        severity: 'warning', ...p.targetSpan,
      });
    }
  }
  return out;
}

type ProbeTargetAst = { kind: 'symbol'; name: string; offset: bigint } | { kind: 'address'; addr: bigint } | { kind: 'line'; file: string; line: number } | { kind: 'user'; path: string };
type LangSpan = { line: number; column: number; endLine: number; endColumn: number };

/** Messages of the handler language that depend on knowing the architecture's registers. */
const REGISTER_DEPENDENT = [/^unknown register '/, /^'arg\d' is not available/];

export interface AttributeInfo { name: string; example: string; insertText: string; doc: string }

/** Attributes written after a probe's target. */
export function probeAttributes(probe: ProbeKeyword): AttributeInfo[] {
  const out: AttributeInfo[] = [];
  if (probe === 'kretprobe') {
    out.push({ name: 'maxactive', example: 'maxactive=20', insertText: 'maxactive=',
      doc: `How many calls of the function may be pending (entered, not yet returned) at once, at most ${MAX_MAXACTIVE}; returns beyond that are counted in nmissed.` });
    out.push({ name: 'data_size', example: 'data_size=8', insertText: 'data_size=',
      doc: `Bytes of private data per pending call, reached through ri->data (at most ${MAX_DATA_SIZE}).` });
  }
  if (probe === 'kwatch') {
    out.push({ name: 'len', example: 'len=8', insertText: 'len=',
      doc: `Bytes to watch, at most ${MAX_KWATCH_LEN} (x86: 1, 2, 4 or 8, the address aligned to it). Required.` });
    out.push({ name: 'type', example: 'type=w', insertText: 'type=',
      doc: 'What access to watch: w (writes), rw (reads and writes), x (execution), r (reads, on CPUs that can watch reads only: not x86). Required.' });
  }
  out.push({ name: 'disabled', example: 'disabled', insertText: 'disabled', doc: 'Register the probe disabled; enable it later from the Kprobes view.' });
  return out;
}
