import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { LANGUAGE_ID } from '../../../extension/constants';
import { activateExtension, workspaceFolder } from './util';

/** Diagnostics of a document once the language server has published some (event-driven, no sleeps). */
function diagnosticsOf(uri: vscode.Uri, ms = 30_000): Promise<vscode.Diagnostic[]> {
  const now = vscode.languages.getDiagnostics(uri);
  if (now.length) return Promise.resolve(now);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { sub.dispose(); reject(new Error(`no diagnostics for ${uri.toString()} within ${ms} ms`)); }, ms);
    const sub = vscode.languages.onDidChangeDiagnostics(e => {
      if (!e.uris.some(u => u.toString() === uri.toString())) return;
      const d = vscode.languages.getDiagnostics(uri);
      if (!d.length) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(d);
    });
  });
}

suite('.kprobe language server', () => {
  teardown(async () => { await vscode.commands.executeCommand('workbench.action.closeAllEditors'); });

  test('the kprobe.image setting (default image for documents without an image header) is contributed', async () => {
    const { ext } = await activateExtension();
    const props = (ext.packageJSON.contributes as { configuration: { properties: Record<string, { type: string; default: unknown }> } }).configuration.properties;
    assert.equal(props['kprobe.image']?.type, 'string');
    assert.equal(vscode.workspace.getConfiguration('kprobe').get<string>('image'), '');
  });

  test('a syntax error in a .kprobe document is reported with its message and range', async () => {
    await activateExtension();
    const doc = await vscode.workspace.openTextDocument({ language: LANGUAGE_ID, content: 'kprobe do_fork {\n  pre {\n    int x = ;\n  }\n}\n' });
    await vscode.window.showTextDocument(doc);
    const diags = await diagnosticsOf(doc.uri);
    const err = diags.find(d => d.severity === vscode.DiagnosticSeverity.Error);
    assert.ok(err, `an error among: ${diags.map(d => d.message).join('; ')}`);
    assert.equal(err.message, "expected an expression but found ';'");
    assert.deepEqual([err.range.start.line, err.range.start.character, err.range.end.line, err.range.end.character], [2, 12, 2, 13]);
  });

  test('a probe on a symbol the image does not have is reported on the symbol', async () => {
    await activateExtension();
    const image = vscode.Uri.joinPath(workspaceFolder().uri, 'kernel', 'build', 'kernel-x86_64.elf').fsPath;
    const doc = await vscode.workspace.openTextDocument({
      language: LANGUAGE_ID,
      content: `image "${image}"\nkprobe do_fork { pre { return 0; } }\nkprobe no_such_fn {\n  pre { return 0; }\n}\n`,
    });
    await vscode.window.showTextDocument(doc);
    const diags = await diagnosticsOf(doc.uri);
    assert.deepEqual(diags.map(d => d.message), ["unknown symbol 'no_such_fn' in the image"]);
    const r = diags[0].range;
    assert.deepEqual([r.start.line, r.start.character, r.end.line, r.end.character], [2, 7, 2, 17]);
  });
});
