import * as vscode from 'vscode';
import { ProbeInfo, ProbeInfoBase, ProbeStateBody, UprobeInfo } from '../adapter/dapCustom';
import { Command, ItemContext } from './constants';
import { kprobeCounters, kprobeListLine, uprobeDescription, uprobeLabel } from './probeRows';
import { ProbeStore } from './probeStore';

export type ProbeListKind = 'kprobes' | 'uprobes';

/** A node of the Kprobes / Uprobes views: a kprobe, a uprobe, or the empty-state placeholder. */
export type ProbeNode =
  | { kind: 'probe'; probe: ProbeInfo }
  | { kind: 'uprobe'; probe: UprobeInfo }
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
    if (this.list === 'kprobes' && st?.kprobes.length) return [...st.kprobes].sort(byAddressThenId).map(probe => ({ kind: 'probe', probe }));
    if (this.list === 'uprobes' && st?.uprobes.length) return [...st.uprobes].sort(byAddressThenId).map(probe => ({ kind: 'uprobe', probe }));
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
    const p: ProbeInfoBase = node.probe;
    const item = node.kind === 'probe'
      ? new vscode.TreeItem(kprobeListLine(node.probe), vscode.TreeItemCollapsibleState.None)
      : new vscode.TreeItem(uprobeLabel(node.probe), vscode.TreeItemCollapsibleState.None);
    item.id = `${this.list}:${p.id}:${p.engineId ?? 'unregistered'}`;
    item.description = node.kind === 'probe' ? kprobeCounters(node.probe) : uprobeDescription(node.probe);
    item.tooltip = node.kind === 'probe' ? tooltip(node.probe) : uprobeTooltip(node.probe);
    item.contextValue = p.gone ? ItemContext.goneProbe : p.enabled ? ItemContext.enabledProbe : ItemContext.disabledProbe;
    const ret = node.probe.kind === 'kretprobe' || node.probe.kind === 'uretprobe';
    item.iconPath = new vscode.ThemeIcon(
      p.gone ? 'debug-breakpoint-unverified' : !p.enabled ? 'debug-breakpoint-disabled'
        : ret ? 'debug-breakpoint-function' : 'debug-breakpoint');
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

function tooltip(p: ProbeInfo): string {
  const lines = [`${p.kind} ${p.name}`, `address ${p.address}`, `hits ${p.nhit}, missed ${p.nmissed}`];
  if (p.maxactive !== undefined) lines.push(`maxactive ${p.maxactive}`);
  if (p.module) lines.push(`module ${p.module}`);
  if (p.source) lines.push(`${p.source.path}:${p.source.line}`);
  return lines.join('\n');
}

function uprobeTooltip(p: UprobeInfo): string {
  const lines = [`${p.kind} ${p.name}`, `${p.path} (inode ${p.inode}) offset 0x${p.offset.toString(16)}`, `hits ${p.nhit}, missed ${p.nmissed}`];
  for (const x of p.processes) lines.push(`inserted in ${x.comm} (pid ${x.pid})`);
  if (p.source) lines.push(`${p.source.path}:${p.source.line}`);
  return lines.join('\n');
}

function byAddressThenId(a: ProbeInfoBase, b: ProbeInfoBase): number {
  const x = BigInt(a.address), y = BigInt(b.address);
  return x < y ? -1 : x > y ? 1 : a.id - b.id;
}
