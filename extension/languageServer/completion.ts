/** Completion items for a position in a .kprobe document. */
import { CompletionItem, CompletionItemKind, MarkupKind } from 'vscode-languageserver/node';
import type { ElfImage } from '../../emulator/elf';
import type { AbiFacts } from '../../emulator/arch/abiFacts';
import { registerRole } from './archRegs';
import { cursorContext, type CursorContext } from './cursorContext';
import { builtins, contextVariables, fieldsOf, handlerKindsFor, probeAttributes, C_KEYWORDS, C_TYPES, CONTEXT_OBJECTS, type ContextObject, type ProbeKeyword } from './analysis';
import { probeableSymbols } from './images';
import { headerModuleSymbols } from './moduleSymbols';
import { PROBE_KEYWORD_DOCS } from './docs';
import { portByName } from '../../emulator/ports';
import { parseTargetText } from '../../emulator/probes/targets';
import { programNamesAtTarget } from '../../emulator/probes/programNames';
import { namesAt } from '../../emulator/elf/dwarf/scopes';
import { typeName } from '../../emulator/handlers/ctypes';
import type { ProgramName } from '../../emulator/handlers';

export interface CompletionInputs {
  text: string;
  offset: number;
  regNames: readonly string[];
  image?: ElfImage;
  /** ABI facts of the arch (register roles in completion details) */
  abi?: AbiFacts;
  /** the document's path, for relative `module "path.ko"` lines (moduleSymbols.ts; without it, found through the image header) */
  file?: string;
}

const MEMBER = /\b([A-Za-z_][A-Za-z0-9_]*)\s*->\s*([A-Za-z0-9_]*)$/;
const PROBE_TARGET = /(?:^|[\s;}])(kprobe|kretprobe|jprobe|kwatch)\s+([A-Za-z0-9_.$]*)$/;
/** after the target: `kretprobe sys_open maxactive=20 da|` */
const PROBE_ATTRS = /(?:^|[\s;}])(kprobe|kretprobe|jprobe|kwatch)\s+[^\s{]+\s+(?:[A-Za-z_]\w*(?:\s*=\s*\w+)?\s+)*[A-Za-z_]*$/;

export function complete(input: CompletionInputs): CompletionItem[] {
  const ctx = cursorContext(input.text, input.offset);
  const lineStart = input.text.lastIndexOf('\n', input.offset - 1) + 1;
  const linePrefix = input.text.slice(lineStart, input.offset);
  switch (ctx.where) {
    case 'comment':
      return [];
    case 'string':
      return ctx.call === 'symbol' && /^[A-Za-z0-9_.$]*$/.test(ctx.prefix) ? symbolItems(input) : [];
    case 'top': {
      const m = PROBE_TARGET.exec(linePrefix);
      if (m) return symbolItems(input);
      const a = PROBE_ATTRS.exec(linePrefix);
      if (a) return attributeItems(a[1] as ProbeKeyword);
      if (/^\s*[A-Za-z_]*$/.test(linePrefix)) return topLevelItems();
      return [];
    }
    case 'probe': {
      const m = PROBE_TARGET.exec(linePrefix);
      if (m) return symbolItems(input);
      return handlerKindsFor(ctx.probe).map(k => ({
        label: k.name,
        kind: CompletionItemKind.Event,
        detail: `${ctx.probe} handler`,
        documentation: { kind: MarkupKind.Markdown, value: k.doc },
        insertText: k.name,
      }));
    }
    case 'handler': {
      const prog = input.image ? programAt(input.image, input.text.slice(0, input.offset), ctx.handler) : undefined;
      const m = MEMBER.exec(linePrefix);
      if (m && prog && !(CONTEXT_OBJECTS as readonly string[]).includes(m[1]) && m[1] !== 'regs') return memberItems(prog.lookup(m[1]));
      const items = handlerItems(ctx, linePrefix, input.regNames, input.abi);
      if (prog && !m && !/\.\s*[A-Za-z0-9_]*$/.test(linePrefix)) {
        for (const n of prog.names) {
          const pn = prog.lookup(n.name);
          items.push({
            label: n.name, kind: CompletionItemKind.Variable,
            detail: pn && 'type' in pn ? `${typeName(pn.type)} (${pn.what})` : `${n.kind} of ${prog.function}`,
            documentation: pn && 'unavailable' in pn ? `not usable here: '${n.name}' ${pn.unavailable}` : `the program's ${n.kind === 'param' ? 'parameter' : 'local'} at ${prog.where} (DWARF)`,
          });
        }
      }
      return items;
    }
  }
}

function handlerItems(ctx: Extract<CursorContext, { where: 'handler' }>, linePrefix: string, regNames: readonly string[], abi: AbiFacts | undefined): CompletionItem[] {
  const m = MEMBER.exec(linePrefix);
  if (m) {
    const obj = m[1];
    if (obj === 'regs') {
      return regNames.map((r, i) => ({
        label: r,
        kind: CompletionItemKind.Field,
        detail: registerRole(abi, r) ? `register (pt_regs): ${registerRole(abi, r)}` : 'register (pt_regs)',
        sortText: String(i).padStart(3, '0'),
      }));
    }
    if ((CONTEXT_OBJECTS as readonly string[]).includes(obj)) {
      return fieldsOf(obj as ContextObject, ctx.handler).map(f => ({
        label: f.name,
        kind: CompletionItemKind.Field,
        detail: f.type,
        documentation: f.doc,
      }));
    }
    return [];
  }
  // after `.` or another operator that needs a member name, offer nothing
  if (/\.\s*[A-Za-z0-9_]*$/.test(linePrefix)) return [];
  const items: CompletionItem[] = [];
  for (const b of builtins()) {
    items.push({
      label: b.name,
      kind: CompletionItemKind.Function,
      detail: b.signature,
      documentation: { kind: MarkupKind.Markdown, value: b.doc },
    });
  }
  for (const v of contextVariables(ctx.handler)) {
    items.push({ label: v.name, kind: CompletionItemKind.Variable, detail: v.type, documentation: v.doc });
  }
  for (const t of C_TYPES) items.push({ label: t, kind: CompletionItemKind.TypeParameter });
  for (const k of C_KEYWORDS) items.push({ label: k, kind: CompletionItemKind.Keyword });
  return items;
}

/** The probed function's DWARF names for a handler that runs at its pc (pre / entry / jprobe) of the probe the text ends in. */
function programAt(image: ElfImage, before: string, handler: string): { names: { name: string; kind: 'param' | 'local' }[]; function: string; where: string; lookup: (n: string) => ProgramName | undefined } | undefined {
  if (!['pre', 'entry', 'jprobe'].includes(handler)) return undefined;
  let target: string | undefined;
  for (const mm of before.matchAll(/(?:^|[\s;}])(?:kprobe|kretprobe|jprobe)\s+([^\s{]+)/g)) target = mm[1];
  const arch = portByName(image.archName);
  if (!target || !arch) return undefined;
  const t = parseTargetText(target);
  const at = typeof t === 'string' ? undefined : programNamesAtTarget(image, arch, t);
  const scope = at ? namesAt(image, at.pc) : undefined;
  if (!at || !scope) return undefined;
  return { names: [...scope.names.values()].map(n => ({ name: n.name, kind: n.kind })), function: scope.function, where: image.symbols.format(at.pc, false), lookup: at.lookup };
}

/** Members of a program name that is a pointer to a struct (after `name->`). */
function memberItems(pn: ProgramName | undefined): CompletionItem[] {
  if (!pn || !('type' in pn)) return [];
  const t = pn.type.kind === 'ptr' ? pn.type.to : undefined;
  if (!t || t.kind !== 'struct') return [];
  return t.members().filter(m => m.name).map(m => ({ label: m.name, kind: CompletionItemKind.Field, detail: typeName(m.type), documentation: `member of ${t.name}` }));
}

function attributeItems(probe: ProbeKeyword): CompletionItem[] {
  return probeAttributes(probe).map(a => ({
    label: a.name,
    kind: CompletionItemKind.Property,
    detail: a.example,
    documentation: a.doc,
    insertText: a.insertText,
  }));
}

function topLevelItems(): CompletionItem[] {
  return ['image', 'kprobe', 'kretprobe', 'jprobe', 'kwatch', 'uprobe', 'uretprobe'].map(k => ({
    label: k,
    kind: CompletionItemKind.Keyword,
    documentation: PROBE_KEYWORD_DOCS[k],
  }));
}

/** the image's symbols, then those of the modules the file names (`module "x.ko"` lines) not already offered, detail "[modname]" */
function symbolItems(input: CompletionInputs): CompletionItem[] {
  const image = input.image;
  const items: CompletionItem[] = image ? probeableSymbols(image).map(s => ({
    label: s.name,
    kind: s.type === 'func' ? CompletionItemKind.Function : CompletionItemKind.Variable,
    detail: `${s.type} 0x${s.value.toString(16)}${s.size ? ` size 0x${s.size.toString(16)}` : ''}`,
  })) : [];
  const seen = new Set(items.map(i => i.label));
  for (const s of headerModuleSymbols(input.text, input.file, image?.path)) {
    if (seen.has(s.name)) continue;
    seen.add(s.name);
    items.push({
      label: s.name,
      kind: s.type === 'func' ? CompletionItemKind.Function : CompletionItemKind.Variable,
      detail: `[${s.module}]`,
      documentation: `${s.type} of module ${s.module} (${s.path}); its address is known once the module is loaded`,
    });
  }
  return items;
}
