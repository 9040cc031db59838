import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from 'vscode-languageclient/node';
import { LANGUAGE_ID, Setting } from './constants';

/**
 * Starts the language client for `.kprobe` handler files (server:
 * dist/languageServer.js over stdio). Failing to start is logged, never
 * thrown: the debugger works without it.
 */
export async function startLanguageClient(extensionPath: string, log: vscode.LogOutputChannel): Promise<LanguageClient | undefined> {
  if (!vscode.workspace.getConfiguration(Setting.section).get<boolean>(Setting.languageServerEnable, true)) {
    log.info('language server disabled by kprobe.languageServer.enable');
    return undefined;
  }
  const module = path.join(extensionPath, 'dist', 'languageServer.js');
  if (!fs.existsSync(module)) {
    log.warn(`language server not started: ${module} is missing (run npm run build)`);
    return undefined;
  }
  const run = { module, transport: TransportKind.stdio };
  const serverOptions: ServerOptions = { run, debug: { ...run, options: { execArgv: ['--nolazy', '--inspect=6019'] } } };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: LANGUAGE_ID }],
    outputChannelName: 'Kprobe Language Server',
  };
  const client = new LanguageClient('kprobeLanguageServer', 'Kprobe Language Server', serverOptions, clientOptions);
  try {
    await client.start();
    log.info('language server started');
    return client;
  } catch (e) {
    log.error(`language server failed to start: ${e instanceof Error ? e.message : String(e)}`);
    try { await client.dispose(); } catch { /* already stopped */ }
    return undefined;
  }
}
