import * as vscode from 'vscode';
import { ProbeInfo, ProbeStateBody } from '../adapter/dapCustom';
import { Command, ItemContext } from './constants';
import { ProbeStore } from './probeStore';

export type ProbeListKind = 'kprobes' | 'uprobes';

/** A node of the Kprobes / Uprobes views: a probe, or the empty-state placeholder. */
export type ProbeNode =
  | { kind: 'probe'; probe: ProbeInfo }
  | { kind: 'placeholder'; text: string; detail?: string };

/** Tree of the probes of one kind (debugfs `kprobes/list`, `uprobe_events`). */
export class ProbeTreeProvider implements vscode.TreeDataProvider<ProbeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<ProbeNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly store: ProbeStore, readonly list: ProbeListKind) {
    this.sub = store.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(element?: ProbeNode): ProbeNode[] {
    if (element) return [];
    const st = this.store.state;
    const probes = st ? st[this.list] : [];
    if (probes.length) return [...probes].sort(byAddressThenId).map(probe => ({ kind: 'probe', probe }));
    return [emptyNode(this.list, st)];
  }

  getTreeItem(node: ProbeNode): vscode.TreeItem {
    if (node.kind === 'placeholder') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.contextValue = ItemContext.placeholder;
      item.tooltip = node.detail;
      item.iconPath = new vscode.ThemeIcon('info');
      return item;
    }
    const p = node.probe;
    const item = new vscode.TreeItem(p.name, vscode.TreeItemCollapsibleState.None);
    item.id = `${this.list}:${p.id}`;
    item.description = describe(p);
    item.tooltip = tooltip(p);
    item.contextValue = p.gone ? ItemContext.goneProbe : p.enabled ? ItemContext.enabledProbe : ItemContext.disabledProbe;
    item.iconPath = new vscode.ThemeIcon(
      p.gone ? 'debug-breakpoint-unverified' : !p.enabled ? 'debug-breakpoint-disabled'
        : p.kind === 'kretprobe' || p.kind === 'uretprobe' ? 'debug-breakpoint-function' : 'debug-breakpoint');
    if (p.source) item.command = { title: 'Reveal Source', command: Command.revealSource, arguments: [node] };
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.emitter.dispose();
  }
}

export function emptyNode(list: ProbeListKind, st: ProbeStateBody | undefined): ProbeNode {
  const what = list === 'kprobes' ? 'kprobes' : 'uprobes';
  if (st?.unavailable) return { kind: 'placeholder', text: `No ${what} registered`, detail: st.unavailable };
  return { kind: 'placeholder', text: `No ${what} registered`,
    detail: st ? undefined : 'Start a kprobe debug session to see its probes.' };
}

/** debugfs-style flags plus counters, e.g. `[OPTIMIZED] hits 3`. */
export function describe(p: ProbeInfo): string {
  const flags: string[] = [];
  if (p.kind === 'kretprobe' || p.kind === 'uretprobe') flags.push('r');
  if (p.gone) flags.push('[GONE]');
  if (!p.enabled) flags.push('[DISABLED]');
  if (p.optimized) flags.push('[OPTIMIZED]');
  flags.push(`hits ${p.nhit}`);
  if (p.nmissed) flags.push(`missed ${p.nmissed}`);
  return flags.join(' ');
}

function tooltip(p: ProbeInfo): string {
  const lines = [`${p.kind} ${p.name}`, `address ${p.address}`, `hits ${p.nhit}, missed ${p.nmissed}`];
  if (p.source) lines.push(`${p.source.path}:${p.source.line}`);
  if (p.process) lines.push(`process ${p.process.comm} (pid ${p.process.pid})`);
  return lines.join('\n');
}

function byAddressThenId(a: ProbeInfo, b: ProbeInfo): number {
  const x = BigInt(a.address), y = BigInt(b.address);
  return x < y ? -1 : x > y ? 1 : a.id - b.id;
}
