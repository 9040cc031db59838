/** Completion items for a position in a .kprobe document. */
import { CompletionItem, CompletionItemKind, MarkupKind } from 'vscode-languageserver/node';
import type { ElfImage } from '../../emulator/elf';
import type { AbiFacts } from '../../emulator/arch/abiFacts';
import { registerRole } from './archRegs';
import { cursorContext, type CursorContext } from './cursorContext';
import { builtins, contextVariables, fieldsOf, handlerKindsFor, probeAttributes, C_KEYWORDS, C_TYPES, CONTEXT_OBJECTS, type ContextObject, type ProbeKeyword } from './analysis';
import { probeableSymbols } from './images';
import { PROBE_KEYWORD_DOCS } from './docs';

export interface CompletionInputs {
  text: string;
  offset: number;
  regNames: readonly string[];
  image?: ElfImage;
  /** ABI facts of the arch (register roles in completion details) */
  abi?: AbiFacts;
}

const MEMBER = /\b([A-Za-z_][A-Za-z0-9_]*)\s*->\s*([A-Za-z0-9_]*)$/;
const PROBE_TARGET = /(?:^|[\s;}])(kprobe|kretprobe|jprobe)\s+([A-Za-z0-9_.$]*)$/;
/** after the target: `kretprobe sys_open maxactive=20 da|` */
const PROBE_ATTRS = /(?:^|[\s;}])(kprobe|kretprobe|jprobe)\s+[^\s{]+\s+(?:[A-Za-z_]\w*(?:\s*=\s*\w+)?\s+)*[A-Za-z_]*$/;

export function complete(input: CompletionInputs): CompletionItem[] {
  const ctx = cursorContext(input.text, input.offset);
  const lineStart = input.text.lastIndexOf('\n', input.offset - 1) + 1;
  const linePrefix = input.text.slice(lineStart, input.offset);
  switch (ctx.where) {
    case 'comment':
      return [];
    case 'string':
      return ctx.call === 'symbol' && /^[A-Za-z0-9_.$]*$/.test(ctx.prefix) ? symbolItems(input.image) : [];
    case 'top': {
      const m = PROBE_TARGET.exec(linePrefix);
      if (m) return symbolItems(input.image);
      const a = PROBE_ATTRS.exec(linePrefix);
      if (a) return attributeItems(a[1] as ProbeKeyword);
      if (/^\s*[A-Za-z_]*$/.test(linePrefix)) return topLevelItems();
      return [];
    }
    case 'probe': {
      const m = PROBE_TARGET.exec(linePrefix);
      if (m) return symbolItems(input.image);
      return handlerKindsFor(ctx.probe).map(k => ({
        label: k.name,
        kind: CompletionItemKind.Event,
        detail: `${ctx.probe} handler`,
        documentation: { kind: MarkupKind.Markdown, value: k.doc },
        insertText: k.name,
      }));
    }
    case 'handler':
      return handlerItems(ctx, linePrefix, input.regNames, input.abi);
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
  return ['image', 'kprobe', 'kretprobe', 'jprobe'].map(k => ({
    label: k,
    kind: CompletionItemKind.Keyword,
    documentation: PROBE_KEYWORD_DOCS[k],
  }));
}

function symbolItems(image: ElfImage | undefined): CompletionItem[] {
  if (!image) return [];
  return probeableSymbols(image).map(s => ({
    label: s.name,
    kind: s.type === 'func' ? CompletionItemKind.Function : CompletionItemKind.Variable,
    detail: `${s.type} 0x${s.value.toString(16)}${s.size ? ` size 0x${s.size.toString(16)}` : ''}`,
  }));
}
