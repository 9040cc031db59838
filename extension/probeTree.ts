import * as vscode from 'vscode';
import { ProbeInfo, ProbeInfoBase, ProbeStateBody, UprobeInfo } from '../adapter/dapCustom';
import { Command, ItemContext } from './constants';
import { ENDED_MARK, kprobeDescription, kprobeLabel, kprobeTooltip, uprobeDescription, uprobeLabel, uprobeProcessDescription, uprobeProcessLabel } from './probeRows';
import { ProbeStore } from './probeStore';

export type ProbeListKind = 'kprobes' | 'uprobes';

/**
 * A node of the Kprobes / Uprobes views: a kprobe, a uprobe, or the
 * empty-state placeholder. `ended`: the node shows the last state of a
 * session that ended (kept until the next launch).
 */
export type ProbeNode =
  | { kind: 'probe'; probe: ProbeInfo; ended?: boolean }
  | { kind: 'uprobe'; probe: UprobeInfo; ended?: boolean }
  /** a process a uprobe is inserted in (child of its row) */
  | { kind: 'uprocess'; probe: UprobeInfo; process: UprobeInfo['processes'][number]; ended?: boolean }
  | { kind: 'placeholder'; text: string; detail?: string; ended?: boolean };

/** Tree of the probes of one kind (debugfs `kprobes/list`, `uprobe_events`). */
export class ProbeTreeProvider implements vscode.TreeDataProvider<ProbeNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<ProbeNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly store: ProbeStore, readonly list: ProbeListKind) {
    this.sub = store.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(element?: ProbeNode): ProbeNode[] {
    if (element) {
      if (element.kind !== 'uprobe') return [];
      return element.probe.processes.map(process => ({ kind: 'uprocess', probe: element.probe, process, ended: element.ended }));
    }
    const st = this.store.state;
    const ended = this.store.ended === true;
    if (this.list === 'kprobes' && st?.kprobes.length) return [...st.kprobes].sort(byAddressThenId).map(probe => ({ kind: 'probe', probe, ended }));
    if (this.list === 'uprobes' && st?.uprobes.length) return [...st.uprobes].sort(byAddressThenId).map(probe => ({ kind: 'uprobe', probe, ended }));
    return [{ ...emptyNode(this.list, st), ended }];
  }

  getTreeItem(node: ProbeNode): vscode.TreeItem {
    if (node.kind === 'placeholder') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.contextValue = ItemContext.placeholder;
      item.tooltip = node.detail;
      if (node.ended) item.description = ENDED_MARK;
      item.iconPath = new vscode.ThemeIcon('info');
      return item;
    }
    const p: ProbeInfoBase = node.probe;
    const ended = node.ended === true;
    if (node.kind === 'uprocess') {
      const x = node.process;
      const item = new vscode.TreeItem(uprobeProcessLabel(x), vscode.TreeItemCollapsibleState.None);
      item.id = `${this.list}:${ended ? 'ended:' : ''}${p.id}:pid:${x.pid}:${x.address}`;
      item.description = uprobeProcessDescription(x);
      item.tooltip = `${x.comm} (pid ${x.pid}): ${node.probe.path} offset 0x${node.probe.offset.toString(16)} at ${x.address}, ${x.page}`;
      item.contextValue = ItemContext.uprobeProcess;
      item.iconPath = new vscode.ThemeIcon('server-process');
      return item;
    }
    const item = node.kind === 'probe'
      ? new vscode.TreeItem(kprobeLabel(node.probe), vscode.TreeItemCollapsibleState.None)
      : new vscode.TreeItem(uprobeLabel(node.probe), node.probe.processes.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
    item.id = `${this.list}:${ended ? 'ended:' : ''}${p.id}:${p.engineId ?? 'unregistered'}`;
    item.description = node.kind === 'probe' ? kprobeDescription(node.probe, ended) : uprobeDescription(node.probe, ended);
    item.tooltip = node.kind === 'probe' ? kprobeTooltip(node.probe, ended) : uprobeTooltip(node.probe, ended);
    // an ended session's rows: no enable/disable/unregister/disassembly (no machine any more); reveal source stays
    item.contextValue = ended ? ItemContext.endedProbe
      : p.gone ? ItemContext.goneProbe : p.enabled ? ItemContext.enabledProbe : ItemContext.disabledProbe;
    const ret = node.probe.kind === 'kretprobe' || node.probe.kind === 'uretprobe';
    item.iconPath = node.kind === 'probe' && node.probe.warning && !p.gone
      ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'))
      : new vscode.ThemeIcon(
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

function uprobeTooltip(p: UprobeInfo, ended: boolean): string {
  const lines = [`${p.kind} ${p.name}`, `${p.path} (inode ${p.inode}) offset 0x${p.offset.toString(16)}${p.symbol ? ` (${p.symbol})` : ''}`,
    `consumers ${p.consumers}, hits ${p.nhit}, missed ${p.nmissed}`];
  for (const x of p.processes) lines.push(`inserted in ${x.comm} (pid ${x.pid}) at ${x.address}`);
  if (p.source) lines.push(`${p.source.path}:${p.source.line}`);
  if (ended) lines.push(ENDED_MARK);
  return lines.join('\n');
}

function byAddressThenId(a: ProbeInfoBase, b: ProbeInfoBase): number {
  const x = BigInt(a.address), y = BigInt(b.address);
  return x < y ? -1 : x > y ? 1 : a.id - b.id;
}
