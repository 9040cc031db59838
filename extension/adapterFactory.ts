import * as path from 'node:path';
import * as vscode from 'vscode';
import { Setting } from './constants';

/**
 * Starts the DAP server: `node dist/adapter.js` over stdio, or connects to an
 * adapter already listening (`node dist/adapter.js --server=PORT`) when the
 * `kprobe.debugServer` setting names a port.
 */
export class KprobeAdapterFactory implements vscode.DebugAdapterDescriptorFactory {
  constructor(private readonly extensionPath: string) {}

  get adapterPath(): string {
    return path.join(this.extensionPath, 'dist', 'adapter.js');
  }

  createDebugAdapterDescriptor(session: vscode.DebugSession): vscode.DebugAdapterDescriptor {
    const port = vscode.workspace.getConfiguration(Setting.section, session.workspaceFolder).get<number>(Setting.debugServer, 0);
    if (port && port > 0) return new vscode.DebugAdapterServer(port, '127.0.0.1');
    // The extension host's own executable: node in a remote/server host, Electron
    // in desktop VS Code (ELECTRON_RUN_AS_NODE makes it behave as node).
    return new vscode.DebugAdapterExecutable(process.execPath, [this.adapterPath], {
      env: { ELECTRON_RUN_AS_NODE: '1' },
      cwd: this.extensionPath,
    });
  }
}
