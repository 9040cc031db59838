/**
 * The language server's logic, independent of the connection: for a
 * document, which image and register set apply, its diagnostics, completions
 * and hovers.
 */
import { Diagnostic, DiagnosticSeverity, Range, CompletionItem, Hover } from 'vscode-languageserver/node';
import type { TextDocument } from 'vscode-languageserver-textdocument';
import type { ElfImage } from '../../emulator/elf';
import { similarSymbols } from '../../emulator/elf/nearNames';
import { analyze, type AnalysisOptions, type LangDiagnostic } from './analysis';
import { portByName } from '../../emulator/ports';
import { programGlobals, programNamesAtTarget, programTypes } from '../../emulator/probes/programNames';
import { regsForArch, type ArchRegs } from './archRegs';
import { ImageCache } from './images';
import { chooseImage, uriToPath, type ImageChoice } from './imageResolve';
import { complete } from './completion';
import { hover } from './hover';
import { DIAGNOSTIC_SOURCE } from './constants';
import { instructionSplit } from './decoderLoader';

export interface DocEnv {
  choice: ImageChoice;
  image?: ElfImage;
  /** why the chosen image could not be used */
  imageProblem?: string;
  regs: ArchRegs;
}

export class KprobeService {
  readonly images = new ImageCache();

  env(doc: TextDocument, settingImage: string | undefined, folders: readonly string[]): DocEnv {
    const text = doc.getText();
    const choice = chooseImage(doc.uri, text, settingImage, folders);
    let image: ElfImage | undefined;
    let imageProblem: string | undefined;
    if (choice.kind === 'error') imageProblem = choice.message;
    else if (choice.kind === 'path') {
      const r = this.images.get(choice.path);
      if (r.ok) image = r.image;
      else imageProblem = r.message;
    }
    return { choice, image, imageProblem, regs: regsForArch(image?.archName) };
  }

  diagnostics(doc: TextDocument, env: DocEnv): Diagnostic[] {
    const out: Diagnostic[] = [];
    const imageRange = this.imageRange(doc, env.choice);
    if (env.imageProblem !== undefined) {
      const via = env.choice.kind === 'path' && env.choice.origin === 'setting' ? ' (from setting kprobe.image)' : '';
      out.push(diag(imageRange, env.imageProblem + via, DiagnosticSeverity.Error));
    } else if (env.image && !env.regs.known) {
      out.push(diag(imageRange, `image architecture ${env.image.archName} has no register table; register names are not checked`, DiagnosticSeverity.Warning));
    }
    const image = env.image;
    let lang: LangDiagnostic[];
    try {
      lang = analyze(doc.getText(), uriToPath(doc.uri) ?? doc.uri, {
        regNames: env.regs.regNames,
        regsKnown: env.regs.known,
        symbolExists: image ? (name: string) => image.symbols.lookup(name) !== undefined : undefined,
        functionExists: image ? (name: string) => image.symbols.lookup(name)?.type === 'func' : undefined,
        similarSymbols: image ? (name: string) => similarSymbols(image.symbols, name) : undefined,
        imageArch: image?.archName ?? env.regs.arch,
        ...(image ? programOptions(image) : {}),
        insnSplit: image ? t => {
          const addr = t.kind === 'address' ? t.addr : (image.symbols.lookup(t.name)?.value ?? -1n) + t.offset;
          return addr < 0n ? undefined : instructionSplit(image, addr);
        } : undefined,
      });
    } catch (e) {
      // the checker must never take the server down: report its failure instead
      lang = [{ message: `internal error while checking: ${e instanceof Error ? e.message : String(e)}`, severity: 'error', line: 1, column: 1, endLine: 1, endColumn: 1 }];
    }
    for (const d of lang) {
      out.push(diag(
        Range.create(Math.max(0, d.line - 1), Math.max(0, d.column - 1), Math.max(0, d.endLine - 1), Math.max(0, d.endColumn - 1)),
        d.message,
        d.severity === 'error' ? DiagnosticSeverity.Error : DiagnosticSeverity.Warning,
      ));
    }
    return out;
  }

  completions(doc: TextDocument, offset: number, env: DocEnv): CompletionItem[] {
    return complete({ text: doc.getText(), offset, regNames: env.regs.regNames, image: env.image, abi: env.regs.abi, file: uriToPath(doc.uri) });
  }

  hover(doc: TextDocument, offset: number, env: DocEnv): Hover | null {
    return hover({
      text: doc.getText(),
      offset,
      image: env.image,
      regNames: env.regs.regNames,
      arch: env.regs.arch,
      abi: env.regs.abi,
      rangeOf: (s, e) => Range.create(doc.positionAt(s), doc.positionAt(e)),
    });
  }

  /** The path inside the image header, else the first line (image given by the setting). */
  private imageRange(doc: TextDocument, choice: ImageChoice): Range {
    const h = choice.kind !== 'none' ? choice.header : undefined;
    if (h) return Range.create(h.line, h.start, h.line, h.end);
    const first = doc.getText().split(/\r?\n/, 1)[0] ?? '';
    return Range.create(0, 0, 0, first.length);
  }
}

/**
 * The image's DWARF for handlers, as the emulator's probe manager gives it
 * (names at a probe's target, globals, types), so the editor accepts and
 * checks `file->name` exactly as a run would; nothing when the image has no
 * port or its debug info cannot be read.
 */
function programOptions(image: ElfImage): Pick<AnalysisOptions, 'programNamesFor' | 'programGlobals' | 'programType'> {
  const arch = portByName(image.archName);
  if (!arch) return {};
  return {
    programNamesFor: t => programNamesAtTarget(image, arch, t)?.lookup,
    programGlobals: programGlobals(image),
    programType: programTypes(image),
  };
}

function diag(range: Range, message: string, severity: DiagnosticSeverity): Diagnostic {
  return { range, message, severity, source: DIAGNOSTIC_SOURCE };
}
