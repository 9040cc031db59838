import * as path from 'node:path';
import * as vscode from 'vscode';
import { KprobeLaunchArgs } from '../adapter/dapCustom';
import { DEBUG_TYPE, ELF_SEARCH_EXCLUDE, ELF_SEARCH_GLOBS } from './constants';

const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];
const DEFAULT_CPUS = 2;

export type KprobeDebugConfiguration = vscode.DebugConfiguration & Partial<KprobeLaunchArgs>;

/**
 * launch.json support for the `kprobe` type. F5 with no launch.json works on
 * an open .elf (that image) or a kernel C file (the image built next to it,
 * else the first kernel image in the workspace). A missing or non-ELF
 * program is reported with an error message and the launch is cancelled.
 */
export class KprobeConfigurationProvider implements vscode.DebugConfigurationProvider {
  private readonly errorEmitter = new vscode.EventEmitter<string>();
  /** Fires with every error shown to the user (tests listen to it). */
  readonly onDidReportError = this.errorEmitter.event;

  dispose(): void { this.errorEmitter.dispose(); }

  async provideDebugConfigurations(folder: vscode.WorkspaceFolder | undefined): Promise<vscode.DebugConfiguration[]> {
    const elfs = await findKernelImages(folder);
    if (!elfs.length) return [launchConfig('${workspaceFolder}/examples/kernel/build/kernel-x86_64.elf')];
    return elfs.map(uri => launchConfig(toLaunchPath(uri, folder), `Boot ${path.basename(uri.fsPath)}`));
  }

  async resolveDebugConfiguration(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
    const c: KprobeDebugConfiguration = { ...config };
    const empty = !c.type && !c.request && !c.name;
    if (empty) Object.assign(c, launchConfig(''));
    c.type ||= DEBUG_TYPE;
    c.request ||= 'launch';
    c.name ||= 'Boot kernel image';
    if (c.request !== 'launch') return this.fail(`request "${String(c.request)}" is not supported by the kprobe debugger (use "launch")`);
    if (c.program === undefined || c.program === '') {
      const uri = await pickProgram(folder);
      if (!uri) {
        return this.fail('no kernel image to boot: open a kernel ELF (.elf) or set "program" in launch.json '
          + '(no *.elf found in the workspace; build one with examples/kernel/build/build.sh)');
      }
      c.program = uri.fsPath;
    }
    if (typeof c.program !== 'string') return this.fail(`"program" must be a path to a kernel ELF image, got ${JSON.stringify(c.program)}`);
    c.cpus ??= DEFAULT_CPUS;
    return c;
  }

  async resolveDebugConfigurationWithSubstitutedVariables(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
    const c = config as KprobeDebugConfiguration;
    if (typeof c.program !== 'string' || c.program === '') return this.fail('"program" must be a path to a kernel ELF image');
    const program = resolveProgramPath(c.program, folder);
    const problem = await checkElf(program);
    if (problem) return this.fail(`cannot boot "${c.program}": ${problem}`);
    if (c.cpus !== undefined && (!Number.isInteger(c.cpus) || c.cpus < 1 || c.cpus > 64)) {
      return this.fail(`"cpus" must be an integer from 1 to 64, got ${JSON.stringify(c.cpus)}`);
    }
    if (c.probes !== undefined && (!Array.isArray(c.probes) || c.probes.some(p => typeof p !== 'string'))) {
      return this.fail('"probes" must be an array of .kprobe file paths');
    }
    return { ...c, program: program.fsPath, probes: c.probes?.map(p => resolveProgramPath(p, folder).fsPath) };
  }

  private fail(message: string): undefined {
    const text = `kprobe: ${message}`;
    this.errorEmitter.fire(text);
    // Not awaited: the message stays until dismissed; the launch is cancelled now.
    void vscode.window.showErrorMessage(text);
    return undefined;
  }
}

function launchConfig(program: string, name = 'Boot kernel image'): KprobeDebugConfiguration {
  return { type: DEBUG_TYPE, request: 'launch', name, program, cpus: DEFAULT_CPUS, stopOnEntry: false };
}

function toLaunchPath(uri: vscode.Uri, folder: vscode.WorkspaceFolder | undefined): string {
  if (folder && uri.fsPath.startsWith(folder.uri.fsPath + path.sep)) {
    return '${workspaceFolder}/' + path.relative(folder.uri.fsPath, uri.fsPath).split(path.sep).join('/');
  }
  return uri.fsPath;
}

function resolveProgramPath(p: string, folder: vscode.WorkspaceFolder | undefined): vscode.Uri {
  if (path.isAbsolute(p)) return vscode.Uri.file(p);
  const base = folder ?? vscode.workspace.workspaceFolders?.[0];
  return base ? vscode.Uri.joinPath(base.uri, p) : vscode.Uri.file(path.resolve(p));
}

/** Why `uri` is not a bootable ELF image, or undefined when it looks like one. */
export async function checkElf(uri: vscode.Uri): Promise<string | undefined> {
  let stat: vscode.FileStat;
  try {
    stat = await vscode.workspace.fs.stat(uri);
  } catch {
    return `file ${uri.fsPath} does not exist`;
  }
  if (stat.type & vscode.FileType.Directory) return `${uri.fsPath} is a directory, not an ELF file`;
  const bytes = await vscode.workspace.fs.readFile(uri);
  if (bytes.length < 4 || ELF_MAGIC.some((b, i) => bytes[i] !== b)) return `${uri.fsPath} is not an ELF file (bad magic)`;
  return undefined;
}

/** The image F5 boots with no launch.json: the active .elf, else one near the active C file, else the workspace's. */
async function pickProgram(folder: vscode.WorkspaceFolder | undefined): Promise<vscode.Uri | undefined> {
  const doc = vscode.window.activeTextEditor?.document;
  const active = doc?.uri;
  if (active && active.scheme === 'file' && active.fsPath.endsWith('.elf')) return active;
  const tabUri = activeTabUri();
  if (tabUri?.fsPath.endsWith('.elf')) return tabUri;
  if (active && active.scheme === 'file' && doc?.languageId === 'c') {
    const near = await findKernelImages(undefined, new vscode.RelativePattern(vscode.Uri.file(path.dirname(active.fsPath)), 'build/*.elf'));
    if (near.length) return near[0];
  }
  return (await findKernelImages(folder))[0];
}

/** The active tab's file when it is not a text editor (an .elf opens as binary). */
function activeTabUri(): vscode.Uri | undefined {
  const input = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
  if (input && typeof input === 'object' && 'uri' in input && input.uri instanceof vscode.Uri) return input.uri;
  return undefined;
}

/** Kernel images in the workspace (or matching `pattern`), x86_64 first, then by path. */
export async function findKernelImages(folder: vscode.WorkspaceFolder | undefined, pattern?: vscode.GlobPattern): Promise<vscode.Uri[]> {
  const globs: vscode.GlobPattern[] = pattern ? [pattern]
    : ELF_SEARCH_GLOBS.map(g => folder ? new vscode.RelativePattern(folder, g) : g);
  for (const g of globs) {
    const found = await vscode.workspace.findFiles(g, ELF_SEARCH_EXCLUDE, 50);
    if (found.length) return found.sort(compareImages);
  }
  return [];
}

function compareImages(a: vscode.Uri, b: vscode.Uri): number {
  const rank = (u: vscode.Uri) => (path.basename(u.fsPath).includes('x86_64') ? 0 : 1);
  return rank(a) - rank(b) || (a.fsPath < b.fsPath ? -1 : a.fsPath > b.fsPath ? 1 : 0);
}
