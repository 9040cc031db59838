import { PORTS } from '../../../emulator/ports';
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { supportedArchNames } from '../../../emulator/arch/registry';
import { imageArch } from '../../../extension/configProvider';
import { DEBUG_TYPE } from '../../../extension/constants';
import { activateExtension, collect, workspaceFolder } from './util';

suite('debug configuration provider', () => {
  teardown(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

  test('offers one launch configuration per kernel image whose architecture the emulator can run', async () => {
    const { api } = await activateExtension();
    const folder = workspaceFolder();
    const configs = await api.configProvider.provideDebugConfigurations(folder);
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
});
