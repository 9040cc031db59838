import * as vscode from 'vscode';
import type { DebugRegisterInfo } from '../adapter/dapCustom';
import { ItemContext } from './constants';
import { ProbeStore } from './probeStore';
import { debugRegisterDescription, debugRegisterLabel } from './probeRows';

/** A node of the Debug Registers view: a CPU, one of its registers, or the empty-state line. */
export type DebugRegNode =
  | { kind: 'cpu'; cpu: number; regs: DebugRegisterInfo[] }
  | { kind: 'register'; reg: DebugRegisterInfo }
  | { kind: 'placeholder'; text: string };

/**
 * The Debug Registers view: per CPU, each hardware debug register (x86
 * DR0-DR3, arm64 breakpoint / watchpoint pairs), who holds it (a kwatch, a
 * data or hardware breakpoint of the debugger), its address, length, type
 * and hits, and the users waiting for it (from `_probeState`).
 */
export class DebugRegTreeProvider implements vscode.TreeDataProvider<DebugRegNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<DebugRegNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly store: ProbeStore) {
    this.sub = store.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(element?: DebugRegNode): DebugRegNode[] {
    if (element?.kind === 'cpu') return element.regs.map(reg => ({ kind: 'register', reg }));
    if (element) return [];
    const st = this.store.state;
    if (!st) return [{ kind: 'placeholder', text: 'No kprobe session' }];
    if (!st.debugRegisters) return [{ kind: 'placeholder', text: st.debugRegistersUnavailable ?? 'No debug registers on this machine' }];
    const byCpu = new Map<number, DebugRegisterInfo[]>();
    for (const r of st.debugRegisters) {
      const l = byCpu.get(r.cpu) ?? [];
      l.push(r);
      byCpu.set(r.cpu, l);
    }
    return [...byCpu].map(([cpu, regs]) => ({ kind: 'cpu', cpu, regs }));
  }

  getTreeItem(node: DebugRegNode): vscode.TreeItem {
    if (node.kind === 'placeholder') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.contextValue = ItemContext.placeholder;
      item.iconPath = new vscode.ThemeIcon('info');
      return item;
    }
    if (node.kind === 'cpu') {
      const used = node.regs.filter(r => r.holder).length;
      const item = new vscode.TreeItem(`CPU ${node.cpu}`, vscode.TreeItemCollapsibleState.Expanded);
      item.id = `dr-cpu:${node.cpu}`;
      item.description = `${used} of ${node.regs.length} in use`;
      // the raw registers (DR0-DR3, DR6, DR7 / the enabled pairs and MDSCR_EL1), as the arch reads them
      const raw = (this.store.state?.debugRegisterValues ?? []).filter(v => v.cpu === node.cpu);
      if (raw.length) item.tooltip = raw.map(v => `${v.name} = ${v.value}`).join('\n');
      item.contextValue = ItemContext.debugCpu;
      item.iconPath = new vscode.ThemeIcon('circuit-board');
      return item;
    }
    const r = node.reg;
    const item = new vscode.TreeItem(debugRegisterLabel(r), vscode.TreeItemCollapsibleState.None);
    item.id = `dr:${r.cpu}:${r.pool}:${r.index}`;
    item.description = debugRegisterDescription(r);
    const h = r.holder;
    item.tooltip = h
      ? [`${r.name} on CPU ${r.cpu}: ${h.owner}`, `${h.type} ${h.addr}${h.where ? ` (${h.where})` : ''} len ${h.len}`, `hits ${h.hits}, missed ${h.nmissed}`,
        ...r.waiting.map(w => `waiting: ${w.owner} ${w.type} ${w.addr} len ${w.len}`)].join('\n')
      : `${r.name} on CPU ${r.cpu}: free`;
    item.contextValue = ItemContext.debugRegister;
    item.iconPath = new vscode.ThemeIcon(h ? (h.type === 'x' ? 'debug-breakpoint-function' : 'eye') : 'circle-outline');
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.emitter.dispose();
  }
}
