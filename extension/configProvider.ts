import { open } from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { KprobeLaunchArgs } from '../adapter/dapCustom';
import { PORTS, portForElfMachine } from '../emulator/ports';
import { MACHINE_LIMITS, machineOptionError } from '../emulator/machineOptions';
import { machineName } from '../emulator/elf/machines';
import { DEBUG_TYPE, ELF_SEARCH_EXCLUDE, ELF_SEARCH_GLOBS } from './constants';

const ELF_MAGIC = [0x7f, 0x45, 0x4c, 0x46];
const DEFAULT_CPUS = MACHINE_LIMITS.cpus.default;

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

  /**
   * Run and Debug's configurations ("create a launch.json file" and the
   * dynamic list): one per kernel image under the open folder whose
   * architecture the emulator has a CPU for (the arch registry decides, so
   * the list grows as architectures land; images of other architectures
   * would only fail at launch), then one per kernel module (.ko) built for
   * the first image's architecture, booting that image and loading the
   * module. Paths are relative to the folder that is open, so the
   * configurations run there. With no image found: one configuration
   * whose empty program F5 fills in (the active .elf, the image next to the
   * active C file, else the workspace's), or says that none exists.
   */
  async provideDebugConfigurations(folder: vscode.WorkspaceFolder | undefined): Promise<vscode.DebugConfiguration[]> {
    const elfs: { uri: vscode.Uri; arch: string }[] = [];
    for (const uri of await findKernelImages(folder)) {
      const a = await imageArch(uri);
      if (a?.runnable) elfs.push({ uri, arch: a.name });
    }
    if (!elfs.length) return [launchConfig('')];
    const configs = elfs.map(e => launchConfig(toLaunchPath(e.uri, folder), `Boot ${path.basename(e.uri.fsPath)}`));
    const first = elfs[0];
    for (const ko of await findModules(folder)) {
      if ((await imageArch(ko))?.name !== first.arch) continue;
      const name = path.basename(ko.fsPath, '.ko').replace(new RegExp(`-${first.arch}$`), '');
      configs.push({ ...launchConfig(toLaunchPath(first.uri, folder), `Module ${name} (${path.basename(first.uri.fsPath)})`), modules: [toLaunchPath(ko, folder)] });
    }
    return configs;
  }

  async resolveDebugConfiguration(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
    const c: KprobeDebugConfiguration = { ...config };
    const empty = !c.type && !c.request && !c.name;
    if (empty) Object.assign(c, launchConfig(''));
    c.type ||= DEBUG_TYPE;
    c.request ||= 'launch';
    c.name ||= 'Boot kernel image';
    if (c.request !== 'launch') return this.fail(`request "${String(c.request)}" is not supported by the kprobe debugger (use "launch")`);
    // a bzImage in "kernel": the full-system PC runs it (no ELF program)
    if (c.kernel !== undefined) return c;
    if (c.program === undefined || c.program === '') {
      const uri = await pickProgram(folder);
      if (!uri) {
        return this.fail('no kernel image to boot: open a kernel ELF (.elf) or set "program" in launch.json '
          + '(no *.elf found in the workspace; build one with examples/kernel/build.sh)');
      }
      c.program = uri.fsPath;
    }
    if (typeof c.program !== 'string') return this.fail(`"program" must be a path to a kernel ELF image, got ${JSON.stringify(c.program)}`);
    c.cpus ??= DEFAULT_CPUS;
    return c;
  }

  async resolveDebugConfigurationWithSubstitutedVariables(folder: vscode.WorkspaceFolder | undefined, config: vscode.DebugConfiguration): Promise<vscode.DebugConfiguration | undefined> {
    const c = config as KprobeDebugConfiguration;
    if (c.kernel !== undefined) return this.linuxConfig(c, folder);
    if (typeof c.program !== 'string' || c.program === '') return this.fail('"program" must be a path to a kernel ELF image');
    const program = resolveProgramPath(c.program, folder);
    const problem = await checkElf(program);
    if (problem) return this.fail(`cannot boot "${c.program}": ${problem}`);
    const cpusError = c.cpus === undefined ? undefined : machineOptionError('cpus', c.cpus);
    if (cpusError) return this.fail(cpusError);
    if (c.probes !== undefined && (!Array.isArray(c.probes) || c.probes.some(p => typeof p !== 'string'))) {
      return this.fail('"probes" must be an array of .kprobe file paths');
    }
    return { ...c, program: program.fsPath, probes: c.probes?.map(p => resolveProgramPath(p, folder).fsPath) };
  }

  /**
   * The full-system PC's launch (`kernel`: a bzImage; `initrd`, `vmlinux`
   * paths): the paths made absolute against the folder; what each file
   * holds is the adapter's check (one line per bad file, at launch).
   */
  private linuxConfig(c: KprobeDebugConfiguration, folder: vscode.WorkspaceFolder | undefined): vscode.DebugConfiguration | undefined {
    const out: Record<string, unknown> = { ...c };
    for (const key of ['kernel', 'initrd', 'vmlinux'] as const) {
      const v = c[key];
      if (v === undefined) continue;
      if (typeof v !== 'string' || v === '') return this.fail(`"${key}" must be a path`);
      out[key] = resolveProgramPath(v, folder).fsPath;
    }
    if (c.sourceMap !== undefined && typeof c.sourceMap === 'object' && c.sourceMap !== null) {
      out.sourceMap = Object.fromEntries(Object.entries(c.sourceMap).map(([k, v]) => [k, typeof v === 'string' ? resolveProgramPath(v, folder).fsPath : v]));
    }
    return out as vscode.DebugConfiguration;
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

/**
 * Kernel images in the workspace (or matching `pattern`): those the emulator
 * can run first, in the order of the ports list (x86_64 first: its kprobes
 * port is the most complete), then by path.
 */
export async function findKernelImages(folder: vscode.WorkspaceFolder | undefined, pattern?: vscode.GlobPattern): Promise<vscode.Uri[]> {
  const globs: vscode.GlobPattern[] = pattern ? [pattern]
    : ELF_SEARCH_GLOBS.map(g => folder ? new vscode.RelativePattern(folder, g) : g);
  for (const g of globs) {
    const found = await vscode.workspace.findFiles(g, ELF_SEARCH_EXCLUDE, 50);
    if (!found.length) continue;
    const rankOf = (a: ImageArch | undefined): number => (a?.runnable ? PORTS.findIndex(p => p.name === a.name) : PORTS.length);
    const ranked = await Promise.all(found.map(async uri => ({ uri, rank: rankOf(await imageArch(uri)) })));
    return ranked.sort((a, b) => a.rank - b.rank || (a.uri.fsPath < b.uri.fsPath ? -1 : a.uri.fsPath > b.uri.fsPath ? 1 : 0)).map(r => r.uri);
  }
  return [];
}

/** Kernel modules (relocatable .ko objects) under the folder, by path. */
async function findModules(folder: vscode.WorkspaceFolder | undefined): Promise<vscode.Uri[]> {
  const found = await vscode.workspace.findFiles(folder ? new vscode.RelativePattern(folder, '**/*.ko') : '**/*.ko', ELF_SEARCH_EXCLUDE, 100);
  return found.sort((a, b) => (a.fsPath < b.fsPath ? -1 : a.fsPath > b.fsPath ? 1 : 0));
}

export interface ImageArch {
  /** architecture name from e_machine (x86_64, aarch64, riscv64, em<N> when unknown) */
  name: string;
  /** the emulator's arch registry has a CPU for it */
  runnable: boolean;
}

/** The architecture an ELF image's header names, or undefined when the file is not a readable ELF. */
export async function imageArch(uri: vscode.Uri): Promise<ImageArch | undefined> {
  let head: Uint8Array;
  try {
    head = await readHead(uri, 20);
  } catch {
    return undefined;
  }
  if (head.length < 20 || ELF_MAGIC.some((b, i) => head[i] !== b)) return undefined;
  const elfClass = head[4] === 1 ? 32 : head[4] === 2 ? 64 : undefined;
  const little = head[5] === 1 ? true : head[5] === 2 ? false : undefined;
  if (elfClass === undefined || little === undefined) return undefined;
  const machine = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint16(18, little);
  return { name: machineName(machine, elfClass), runnable: portForElfMachine(machine)?.hasCpu === true };
}

/** The first `n` bytes of a file (a kernel image can be hundreds of MB: local files are not read whole). */
async function readHead(uri: vscode.Uri, n: number): Promise<Uint8Array> {
  if (uri.scheme !== 'file') return (await vscode.workspace.fs.readFile(uri)).subarray(0, n);
  const f = await open(uri.fsPath, 'r');
  try {
    const buf = new Uint8Array(n);
    const { bytesRead } = await f.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await f.close();
  }
}
