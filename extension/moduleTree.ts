import * as vscode from 'vscode';
import type { ModuleInfo } from '../adapter/dapCustom';
import { ItemContext } from './constants';
import { ProbeStore } from './probeStore';
import { moduleDescription, moduleLabel } from './probeRows';

/** A node of the Modules view: a loaded module, or the empty-state line. */
export type ModuleNode =
  | { kind: 'module'; module: ModuleInfo; ended?: boolean }
  | { kind: 'placeholder'; text: string };

/** The Modules view: the session's loaded kernel modules (from `_probeState`). */
export class ModuleTreeProvider implements vscode.TreeDataProvider<ModuleNode>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<ModuleNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly store: ProbeStore) {
    this.sub = store.onDidChange(() => this.emitter.fire(undefined));
  }

  getChildren(element?: ModuleNode): ModuleNode[] {
    if (element) return [];
    const mods = this.store.state?.modules;
    if (!mods) return [{ kind: 'placeholder', text: this.store.state ? 'No module support on this machine' : 'No kernel modules loaded' }];
    if (!mods.length) return [{ kind: 'placeholder', text: 'No kernel modules loaded' }];
    return mods.map(module => ({ kind: 'module', module, ended: this.store.ended === true }));
  }

  getTreeItem(node: ModuleNode): vscode.TreeItem {
    if (node.kind === 'placeholder') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.contextValue = ItemContext.placeholder;
      item.iconPath = new vscode.ThemeIcon('info');
      return item;
    }
    const m = node.module;
    const item = new vscode.TreeItem(moduleLabel(m), vscode.TreeItemCollapsibleState.None);
    item.id = `module:${m.name}:${m.base}`;
    item.description = moduleDescription(m);
    item.tooltip = [`${m.name} (${m.path})`, `core ${m.base} +${m.size}`, m.init ? `init ${m.init.base} +${m.init.size}` : 'init freed',
      `state ${m.state}`, `used by ${m.usedBy.join(', ') || 'nothing'}`, `kprobes in it: ${m.probesIn}`].join('\n');
    item.contextValue = node.ended ? ItemContext.endedProbe : m.state === 'live' ? ItemContext.liveModule : ItemContext.busyModule;
    item.iconPath = new vscode.ThemeIcon('package');
    return item;
  }

  dispose(): void {
    this.sub.dispose();
    this.emitter.dispose();
  }
}
