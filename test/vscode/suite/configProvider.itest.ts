import { PORTS } from '../../../emulator/ports';
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { supportedArchNames } from '../../../emulator/arch/registry';
import { imageArch } from '../../../extension/configProvider';
import { DEBUG_TYPE } from '../../../extension/constants';
import { activateExtension, collect, endSession, pageRequest, trackStops, until, workspaceFolder } from './util';

suite('debug configuration provider', () => {
  teardown(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

  test('offers one launch configuration per kernel image whose architecture the emulator can run', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const all = await api.configProvider.provideDebugConfigurations(folder);
    // the images first, then one per module of the first image's architecture
    const configs = all.filter(c => c.modules === undefined);
    assert.deepEqual(all.slice(0, configs.length), configs);
    const programs = configs.map(c => c.program as string);
    // the workspace holds images for three architectures; the arch registry says which have a CPU
    const images = ['kernel-aarch64.elf', 'kernel-riscv64.elf', 'kernel-x86_64.elf'];
    const arches = await Promise.all(images.map(f => imageArch(vscode.Uri.joinPath(folder.uri, 'kernel', 'build', f))));
    assert.deepEqual(arches.map(a => a?.name), ['aarch64', 'riscv64', 'x86_64']);
    // runnable images in the ports' order (x86_64 first)
    const portOrder = (f: string): number => PORTS.findIndex(p => `kernel-${p.name}.elf` === f);
    const runnable = images.filter((_, i) => supportedArchNames().includes(arches[i]!.name)).sort((x, y) => portOrder(x) - portOrder(y));
    assert.ok(runnable.includes('kernel-x86_64.elf'));
    assert.deepEqual(programs, runnable.map(f => `\${workspaceFolder}/kernel/build/${f}`));
    for (const c of configs) assert.equal(c.type, DEBUG_TYPE);
    for (const [i, a] of arches.entries()) assert.equal(a!.runnable, supportedArchNames().includes(a!.name), images[i]);
  });

  test('F5 on a kernel C file with no launch.json boots the image built next to it', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.joinPath(folder.uri, 'kernel', 'fork.c'));
    await vscode.window.showTextDocument(doc);
    const resolved = await api.configProvider.resolveDebugConfiguration(folder, { type: '', request: '', name: '' });
    assert.ok(resolved, 'a configuration is produced');
    assert.equal(resolved.type, DEBUG_TYPE);
    assert.equal(resolved.request, 'launch');
    assert.equal(resolved.program, path.join(folder.uri.fsPath, 'kernel', 'build', 'kernel-x86_64.elf'));
    const final = await api.configProvider.resolveDebugConfigurationWithSubstitutedVariables(folder, resolved);
    assert.ok(final, 'the sample ELF passes validation');
    assert.equal(final.program, resolved.program);
    assert.equal(final.cpus, 2);
  });

  test('F5 with an .elf open (no launch.json) boots that image', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    // not the workspace's first image (x86_64 comes first): the open one must win
    const elf = vscode.Uri.joinPath(folder.uri, 'kernel', 'build', 'kernel-riscv64.elf');
    await vscode.commands.executeCommand('vscode.open', elf);
    const resolved = await api.configProvider.resolveDebugConfiguration(folder, { type: '', request: '', name: '' });
    assert.ok(resolved, 'a configuration is produced');
    assert.equal(resolved.type, DEBUG_TYPE);
    assert.equal(resolved.program, elf.fsPath);
    const final = await api.configProvider.resolveDebugConfigurationWithSubstitutedVariables(folder, resolved);
    assert.equal(final?.program, elf.fsPath);
  });

  test('a relative program resolves against the workspace folder', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const final = await api.configProvider.resolveDebugConfigurationWithSubstitutedVariables(folder,
      { type: DEBUG_TYPE, request: 'launch', name: 'x', program: 'kernel/build/kernel-riscv64.elf' });
    assert.equal(final?.program, path.join(folder.uri.fsPath, 'kernel', 'build', 'kernel-riscv64.elf'));
  });

  test('a missing program is refused with a message naming the file', async () => {
    const { api } = await activateExtension();
    const missing = path.join(workspaceFolder().uri.fsPath, 'kernel', 'build', 'no-such-image.elf');
    const { result, fired } = await collect(api.configProvider.onDidReportError, () =>
      api.configProvider.resolveDebugConfigurationWithSubstitutedVariables(workspaceFolder(),
        { type: DEBUG_TYPE, request: 'launch', name: 'x', program: missing }));
    assert.equal(result, undefined);
    assert.equal(fired.length, 1);
    assert.match(fired[0], /does not exist/);
    assert.ok(fired[0].includes(missing), fired[0]);
  });

  test('a program that is not an ELF is refused', async () => {
    const { api } = await activateExtension();
    const notElf = path.join(workspaceFolder().uri.fsPath, 'kernel', 'fork.c');
    const { result, fired } = await collect(api.configProvider.onDidReportError, () =>
      api.configProvider.resolveDebugConfigurationWithSubstitutedVariables(workspaceFolder(),
        { type: DEBUG_TYPE, request: 'launch', name: 'x', program: notElf }));
    assert.equal(result, undefined);
    assert.deepEqual(fired, [`kprobe: cannot boot "${notElf}": ${notElf} is not an ELF file (bad magic)`]);
  });

  test('startDebugging with a missing program fails cleanly through the real debug service', async () => {
    const { api } = await activateExtension();
    const { result, fired } = await collect(api.configProvider.onDidReportError, () =>
      vscode.debug.startDebugging(workspaceFolder(), { type: DEBUG_TYPE, request: 'launch', name: 'missing', program: '/nonexistent/kernel.elf' }));
    assert.equal(result, false);
    assert.equal(vscode.debug.activeDebugSession, undefined);
    assert.deepEqual(fired, ['kprobe: cannot boot "/nonexistent/kernel.elf": file /nonexistent/kernel.elf does not exist']);
  });
  test('Run and Debug: "create a launch.json file" > Kprobe writes configurations that run in the open folder; F5 boots the first', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const dir = vscode.Uri.joinPath(folder.uri, '.vscode');
    const launchJson = vscode.Uri.joinPath(dir, 'launch.json');
    const existed = await vscode.workspace.fs.stat(dir).then(() => true, () => false);
    assert.equal(await vscode.workspace.fs.stat(launchJson).then(() => true, () => false), false, `${launchJson.fsPath} must not exist before the test`);
    const t = trackStops();
    try {
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.commands.executeCommand('workbench.view.debug');
      // as a user: the welcome link of the Run and Debug view, then the debugger in the quick pick
      await pageRequest('click-link?text=' + encodeURIComponent('create a launch.json file'));
      const picked = await pageRequest<{ labels: string[] }>('quick-pick?text=' + encodeURIComponent('Kprobe'));
      assert.ok(picked.labels.some(l => l.includes('Kprobe')), picked.labels.join(' | '));
      const shown = (): vscode.TextEditor | undefined => vscode.window.visibleTextEditors.find(e => e.document.uri.fsPath === launchJson.fsPath);
      await until(vscode.window.onDidChangeVisibleTextEditors, () => shown() !== undefined, 'launch.json opened in an editor');
      const text = shown()!.document.getText();
      const configs = (JSON.parse(text.replace(/^\s*\/\/.*$/gm, '')) as { configurations: vscode.DebugConfiguration[] }).configurations;
      // no static entry pointing at examples/ below the open folder: every program is under the folder that is open
      const programs = configs.map(c => String(c.program));
      assert.ok(programs.length > 0 && programs.every(p => p.startsWith('${workspaceFolder}/kernel/build/kernel-')), programs.join(', '));
      assert.equal(programs[0], '${workspaceFolder}/kernel/build/kernel-x86_64.elf');
      const mod = configs.find(c => c.name === 'Module kprobe_example (kernel-x86_64.elf)');
      assert.deepEqual(mod?.modules, ['${workspaceFolder}/modules/build/kprobe_example-x86_64.ko'], configs.map(c => c.name).join(', '));
      await vscode.commands.executeCommand('hideSuggestWidget');
      await vscode.commands.executeCommand('notifications.clearAll');
      await pageRequest('screenshot/create-launch-json');

      // F5: the first configuration (the one Run and Debug selects) boots; a function breakpoint proves the kernel runs
      vscode.debug.addBreakpoints([new vscode.FunctionBreakpoint('do_fork')]);
      const { fired } = await collect(api.configProvider.onDidReportError, async () => {
        await vscode.commands.executeCommand('workbench.action.debug.start');
        await until(t.changed, () => t.stops.length > 0, 'the do_fork stop of the generated configuration');
      });
      assert.deepEqual(fired, []);
      assert.equal(vscode.debug.activeDebugSession?.configuration.name, configs[0].name);
      assert.match(String(t.stops[0].body.description), /do_fork/);
      // the Call Stack shows the stop (VS Code selected its frame) before the picture
      await until(vscode.debug.onDidChangeActiveStackItem, () => vscode.debug.activeStackItem instanceof vscode.DebugStackFrame, 'VS Code showing the stopped frame');
      await pageRequest('screenshot/create-launch-json-f5');
    } finally {
      t.dispose();
      await endSession();
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.workspace.fs.delete(existed ? launchJson : dir, { recursive: true, useTrash: false }).then(undefined, () => undefined);
    }
  });
});
