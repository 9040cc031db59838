import * as vscode from 'vscode';
import { ProbeInfoBase, ProbeRequest } from '../adapter/dapCustom';
import { Command } from './constants';
import { disassemblyUri } from './disassembly';
import { ProbeStore } from './probeStore';
import { ProbeNode } from './probeTree';

/** Registers the per-probe and view-title commands of the Kprobes / Uprobes views. */
export function registerProbeCommands(store: ProbeStore, log: vscode.LogOutputChannel): vscode.Disposable[] {
  const run = (id: string, fn: (...args: unknown[]) => Promise<unknown>) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (e) {
        const msg = `kprobe: ${e instanceof Error ? e.message : String(e)}`;
        log.error(`${id}: ${msg}`);
        void vscode.window.showErrorMessage(msg);
        return undefined;
      }
    });
  return [
    run(Command.enableProbe, async a => {
      const id = probeOf(a).id;
      const r = await store.request(ProbeRequest.setEnabled, { id, enabled: true });
      tick(id);
      return r;
    }),
    run(Command.disableProbe, async a => {
      const id = probeOf(a).id;
      const r = await store.request(ProbeRequest.setEnabled, { id, enabled: false });
      await untick(store, id);
      return r;
    }),
    run(Command.unregisterProbe, a => store.request(ProbeRequest.unregister, { id: probeOf(a).id })),
    run(Command.enableAll, () => store.request(ProbeRequest.setGlobalEnabled, { enabled: true })),
    run(Command.disableAll, () => store.request(ProbeRequest.setGlobalEnabled, { enabled: false })),
    run(Command.enableOptimization, () => store.request(ProbeRequest.setOptimization, { enabled: true })),
    run(Command.disableOptimization, () => store.request(ProbeRequest.setOptimization, { enabled: false })),
    run(Command.refresh, () => store.refresh()),
    run(Command.unloadModule, a => store.request(ProbeRequest.unloadModule, { name: moduleOf(a) })),
    run(Command.loadModule, async (a?: unknown) => {
      // API callers and tests pass {path, params}; the view title asks for the file
      if (typeof a === 'object' && a !== null && typeof (a as { path?: unknown }).path === 'string') {
        const x = a as { path: string; params?: string[] };
        return store.request(ProbeRequest.loadModule, { path: x.path, params: x.params ?? [] });
      }
      const picked = await vscode.window.showOpenDialog({ canSelectMany: false, filters: { 'Kernel modules': ['ko', 'o'] }, title: 'Load a kernel module' });
      if (!picked?.length) return undefined;
      const params = await vscode.window.showInputBox({ prompt: 'Module parameters (name=value ...), optional' });
      return store.request(ProbeRequest.loadModule, { path: picked[0].fsPath, params: (params ?? '').split(/\s+/).filter(Boolean) });
    }),
    run(Command.revealSource, async a => {
      const p = probeOf(a);
      if (!p.source) throw new Error(`no source line is known for ${p.name} (${p.address})`);
      const pos = new vscode.Position(Math.max(0, p.source.line - 1), 0);
      const uri = p.source.path.includes('://') ? vscode.Uri.parse(p.source.path) : vscode.Uri.file(p.source.path);
      return vscode.window.showTextDocument(uri, { selection: new vscode.Range(pos, pos), preserveFocus: false });
    }),
    run(Command.openDisassembly, async a => {
      const p = probeOf(a);
      const session = store.session;
      if (!session) throw new Error('no kprobe debug session is running');
      const doc = await vscode.workspace.openTextDocument(disassemblyUri(session.id, p.address, p.name));
      return vscode.window.showTextDocument(doc, { preview: true });
    }),
  ];
}

/**
 * VS Code breakpoints unticked by Disable Probe, by their DAP id: the
 * probe of a breakpoint is the breakpoint, so disabling it unticks the
 * breakpoint (the adapter keeps the probe registered and disabled, see
 * adapter/parkedBreakpoints.ts) and Enable Probe ticks it again.
 */
const unticked = new Map<number, vscode.Breakpoint>();

/** the same breakpoint, ticked or not (the API's breakpoints are immutable) */
function withEnabled(b: vscode.Breakpoint, enabled: boolean): vscode.Breakpoint | undefined {
  if (b instanceof vscode.SourceBreakpoint) return new vscode.SourceBreakpoint(b.location, enabled, b.condition, b.hitCondition, b.logMessage);
  if (b instanceof vscode.FunctionBreakpoint) return new vscode.FunctionBreakpoint(b.functionName, enabled, b.condition, b.hitCondition, b.logMessage);
  return undefined;
}

/** Untick the VS Code breakpoint whose DAP id is `id` (none: a probe file's probe, nothing to untick). */
async function untick(store: ProbeStore, id: number): Promise<void> {
  const session = store.session;
  if (!session) return;
  for (const b of vscode.debug.breakpoints) {
    if (!b.enabled) continue;
    const dap = await session.getDebugProtocolBreakpoint(b) as { id?: number } | undefined;
    if (dap?.id !== id) continue;
    const off = withEnabled(b, false);
    if (!off) return;
    vscode.debug.removeBreakpoints([b]);
    vscode.debug.addBreakpoints([off]);
    unticked.set(id, off);
    return;
  }
}

/** Tick again the breakpoint Disable Probe unticked (still there: the user may have removed it meanwhile). */
function tick(id: number): void {
  const b = unticked.get(id);
  unticked.delete(id);
  if (!b || !vscode.debug.breakpoints.includes(b)) return;
  const on = withEnabled(b, true);
  if (!on) return;
  vscode.debug.removeBreakpoints([b]);
  vscode.debug.addBreakpoints([on]);
}

/** The module a command was invoked on: a Modules view node or its name. */
function moduleOf(arg: unknown): string {
  if (typeof arg === 'string') return arg;
  if (typeof arg === 'object' && arg !== null && (arg as { kind?: unknown }).kind === 'module') return (arg as { module: { name: string } }).module.name;
  throw new Error('this command needs a module: run it from the Modules view');
}

/** The probe a command was invoked on: a tree node (menus) or a ProbeInfo / UprobeInfo (API callers, tests). */
function probeOf(arg: unknown): ProbeInfoBase {
  if (isNode(arg) && (arg.kind === 'probe' || arg.kind === 'uprobe')) return arg.probe;
  if (isProbe(arg)) return arg;
  throw new Error('this command needs a probe: run it from the Kprobes or Uprobes view');
}

function isNode(x: unknown): x is ProbeNode {
  if (typeof x !== 'object' || x === null || !('kind' in x)) return false;
  const k = (x as { kind: unknown }).kind;
  return (k === 'probe' || k === 'uprobe') ? 'probe' in x : k === 'placeholder';
}

function isProbe(x: unknown): x is ProbeInfoBase {
  return typeof x === 'object' && x !== null && typeof (x as ProbeInfoBase).id === 'number' && typeof (x as ProbeInfoBase).address === 'string';
}
