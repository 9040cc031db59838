import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { Command, DEBUG_TYPE, View } from '../../../extension/constants';
import { activateExtension } from './util';

interface Contributes {
  debuggers?: { type: string; program?: string }[];
  views?: Record<string, { id: string; name: string }[]>;
  commands?: { command: string }[];
  breakpoints?: { language: string }[];
}

suite('activation', () => {
  test('the extension activates and returns its API', async () => {
    const { ext, api } = await activateExtension();
    assert.equal(ext.isActive, true);
    assert.ok(api.configProvider, 'API exposes the configuration provider');
    assert.equal(api.kprobesTree.list, 'kprobes');
    assert.equal(api.uprobesTree.list, 'uprobes');
  });

  test('the kprobe debugger type is contributed with its adapter program', async () => {
    const { ext, api } = await activateExtension();
    const c = ext.packageJSON.contributes as Contributes;
    const dbg = c.debuggers?.find(d => d.type === DEBUG_TYPE);
    assert.ok(dbg, 'debuggers contains type kprobe');
    assert.equal(dbg.program, './dist/adapter.js');
    assert.ok(c.breakpoints?.some(b => b.language === 'c'), 'breakpoints allowed in C files');
    assert.match(api.adapterFactory.adapterPath, /dist[\\/]adapter\.js$/);
  });

  test('Kprobes, Uprobes, Modules and Debug Registers views live in the Run and Debug container and can be focused', async () => {
    const { ext } = await activateExtension();
    const debugViews = (ext.packageJSON.contributes as Contributes).views?.debug ?? [];
    assert.deepEqual(debugViews.map(v => [v.id, v.name]), [[View.kprobes, 'Kprobes'], [View.uprobes, 'Uprobes'], [View.modules, 'Modules'], [View.debugRegisters, 'Debug Registers']]);
    // `<viewId>.focus` exists only for views the workbench registered.
    await vscode.commands.executeCommand(`${View.kprobes}.focus`);
    await vscode.commands.executeCommand(`${View.uprobes}.focus`);
    await vscode.commands.executeCommand(`${View.modules}.focus`);
    await vscode.commands.executeCommand(`${View.debugRegisters}.focus`);
  });

  test('every command id is registered and contributed', async () => {
    const { ext } = await activateExtension();
    const registered = new Set(await vscode.commands.getCommands(true));
    const contributed = new Set(((ext.packageJSON.contributes as Contributes).commands ?? []).map(c => c.command));
    for (const id of Object.values(Command)) {
      assert.ok(registered.has(id), `command ${id} registered`);
      assert.ok(contributed.has(id), `command ${id} contributed in package.json`);
    }
  });

  test('with no session the views show an empty state', async () => {
    const { api } = await activateExtension();
    const mods = api.modulesTree.getChildren();
    assert.equal(mods.length, 1);
    assert.equal(api.modulesTree.getTreeItem(mods[0]).label, 'No kernel modules loaded');
    for (const [tree, text] of [[api.uprobesTree, 'No uprobes registered'], [api.kprobesTree, 'No kprobes registered']] as const) {
      const nodes = tree.getChildren();
      assert.equal(nodes.length, 1);
      const item = tree.getTreeItem(nodes[0]);
      assert.equal(item.label, text);
      assert.equal(item.contextValue, 'kprobe.placeholder');
    }
  });
});
