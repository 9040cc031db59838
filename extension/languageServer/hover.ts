/** Hover text for builtins, handler kinds, probe keywords and context variables. */
import { Hover, MarkupKind, Range } from 'vscode-languageserver/node';
import type { ElfImage } from '../../emulator/elf';
import { builtins, contextVariables, fieldsOf, handlerKindsFor, type ContextObject, type ProbeKeyword } from './analysis';
import type { AbiFacts } from '../../emulator/arch/abiFacts';
import { registerRole } from './archRegs';
import { cursorContext } from './cursorContext';
import { PROBE_KEYWORD_DOCS } from './docs';

export interface HoverInputs {
  text: string;
  offset: number;
  /** converts a document offset to a position */
  rangeOf(start: number, end: number): Range;
  image?: ElfImage;
  regNames: readonly string[];
  arch: string;
  /** ABI facts of the arch (register roles, argument registers) */
  abi?: AbiFacts;
}

function wordAt(text: string, offset: number): { word: string; start: number; end: number } | undefined {
  const isWord = (ch: string | undefined): boolean => ch !== undefined && /[A-Za-z0-9_.$]/.test(ch);
  let s = offset;
  while (s > 0 && isWord(text[s - 1])) s--;
  let e = offset;
  while (e < text.length && isWord(text[e])) e++;
  if (s === e) return undefined;
  return { word: text.slice(s, e), start: s, end: e };
}

function md(value: string, range: Range): Hover {
  return { contents: { kind: MarkupKind.Markdown, value }, range };
}

export function hover(input: HoverInputs): Hover | null {
  const w = wordAt(input.text, input.offset);
  if (!w) return null;
  const range = input.rangeOf(w.start, w.end);
  const ctx = cursorContext(input.text, w.start);
  if (ctx.where === 'comment') return null;
  if (ctx.where === 'string') {
    if (ctx.call === 'symbol') return symbolHover(input.image, w.word, range);
    return null;
  }
  if (ctx.where === 'probe') {
    const k = handlerKindsFor(ctx.probe).find(h => h.name === w.word);
    if (k) return md(`**${k.name}** handler (${ctx.probe})\n\n${k.doc}`, range);
    return null;
  }
  if (ctx.where === 'top') {
    const doc = PROBE_KEYWORD_DOCS[w.word];
    if (doc) return md(`**${w.word}**\n\n${doc}`, range);
    // the probe target after a probe keyword
    const before = input.text.slice(input.text.lastIndexOf('\n', w.start - 1) + 1, w.start);
    if (/(kprobe|kretprobe|jprobe|kwatch)\s+$/.test(before)) return symbolHover(input.image, w.word.split('+')[0], range);
    return null;
  }
  // inside a handler body
  const prev = input.text.slice(Math.max(0, w.start - 16), w.start);
  if (/->\s*$/.test(prev)) {
    if (/\bregs\s*->\s*$/.test(prev) && input.regNames.includes(w.word)) {
      const role = registerRole(input.abi, w.word);
      let text = `**regs->${w.word}** — register of the probed context (${input.arch} pt_regs${role ? `; ${role}` : ''}), unsigned long; assigning it changes the context.`;
      if (input.abi && w.word === input.abi.pcReg && input.abi.optprobes) {
        text += ' A pre handler that assigns it and returns non-zero resumes there, but only while the probe is not jump-optimized: '
          + 'give the kprobe a `post` handler (an empty one will do) or set debug.kprobes_optimization=0 to keep it a breakpoint.';
      }
      return md(text, range);
    }
    const obj = /\b(p|ri|current)\s*->\s*$/.exec(prev)?.[1] as ContextObject | undefined;
    const f = obj ? fieldsOf(obj, ctx.handler).find(x => x.name === w.word) : undefined;
    return f ? md('```c\n' + `${f.type} ${obj}->${f.name}` + '\n```\n\n' + f.doc, range) : null;
  }
  const b = builtins().find(x => x.name === w.word);
  if (b) {
    const ret = b.name === 'regs_return_value' && input.abi ? `\n\nOn ${input.abi.arch} this reads \`regs->${input.abi.retReg}\`.` : '';
    return md('```c\n' + b.signature + '\n```\n\n' + b.doc + ret, range);
  }
  const v = contextVariables(ctx.handler).find(x => x.name === w.word);
  if (v) {
    const arg = /^arg(\d)$/.exec(v.name);
    const reg = arg && input.abi ? input.abi.argRegs[Number(arg[1])] : undefined;
    const where = reg !== undefined ? `\n\nOn ${input.abi!.arch} this is \`regs->${reg}\`.` : '';
    return md('```c\n' + `${v.type} ${v.name}` + '\n```\n\n' + v.doc + where, range);
  }
  return null;
}

function symbolHover(image: ElfImage | undefined, name: string, range: Range): Hover | null {
  if (!image) return null;
  const s = image.symbols.lookup(name);
  if (!s) return null;
  return md(`**${s.name}** — ${s.type}, ${s.bind}, at \`0x${s.value.toString(16)}\`${s.size ? `, size 0x${s.size.toString(16)}` : ''}`, range);
}

export type { ProbeKeyword };
