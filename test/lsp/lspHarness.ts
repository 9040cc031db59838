/**
 * Drives the kprobe language server over LSP (stdio, JSON-RPC) the way an
 * editor does. The server is bundled from source with esbuild into
 * out-quick/ (never stale); where esbuild cannot run, dist/languageServer.js
 * from `npm run build` is used. StartOptions.script runs a given server
 * script instead (bundle.test.ts runs the shipped dist/languageServer.js).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { existsSync, rmSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';
import { StreamMessageReader, StreamMessageWriter, createMessageConnection, type MessageConnection } from 'vscode-jsonrpc/node';
import type {
  CompletionItem, CompletionList, Diagnostic, Hover, InitializeParams, InitializeResult,
  PublishDiagnosticsParams, FoldingRange, Position,
} from 'vscode-languageserver-protocol';
import { repoPath } from '../util/paths';

interface EsbuildApi { build(opts: Record<string, unknown>): Promise<unknown> }

let bundled: Promise<string> | undefined;

/** Path of a runnable server script (built once per test process). */
export function serverScript(): Promise<string> {
  bundled ??= (async () => {
    const dir = repoPath('out-quick', 'lsp', String(process.pid));
    const out = join(dir, 'languageServer.js');
    try {
      // createRequire keeps esbuild out of the test's own bundle
      const esbuild = createRequire(repoPath('package.json'))('esbuild') as EsbuildApi;
      const common = { bundle: true, platform: 'node', target: 'node20', format: 'cjs', logLevel: 'warning', external: ['vscode'] };
      await esbuild.build({ ...common, entryPoints: [repoPath('extension', 'languageServer', 'server.ts')], outfile: out });
      // the decoder bundle the server loads on demand, next to it as in dist/
      await esbuild.build({ ...common, entryPoints: [repoPath('emulator', 'arch', 'decoders.ts')], outfile: join(dir, 'decoders.js') });
      process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
      return out;
    } catch (e) {
      const dist = repoPath('dist', 'languageServer.js');
      if (existsSync(dist)) return dist;
      throw new Error(`cannot bundle the language server (${e instanceof Error ? e.message : String(e)}) and ${dist} does not exist`);
    }
  })();
  return bundled;
}

export function fileUri(path: string): string { return pathToFileURL(path).href; }

export interface StartOptions {
  /** answer workspace/configuration with these sections (undefined: the client does not support configuration) */
  configuration?: Record<string, unknown>;
  initializationOptions?: unknown;
  workspaceFolders?: string[];
  /** server script to run with `node SCRIPT --stdio` (default: the server bundled from source) */
  script?: string;
}

export class LspClient {
  private readonly received = new Map<string, PublishDiagnosticsParams[]>();
  /** version undefined: the next publication for the uri, whatever its version */
  private readonly waiters: { uri: string; version?: number; resolve: (d: Diagnostic[]) => void }[] = [];
  private readonly versions = new Map<string, number>();
  readonly stderr: string[] = [];
  readonly configurationRequests: unknown[] = [];
  initializeResult!: InitializeResult;
  private exited: Promise<number | null>;

  private constructor(private readonly proc: ChildProcess, readonly conn: MessageConnection, private readonly opts: StartOptions) {
    this.exited = new Promise(res => proc.once('exit', code => res(code)));
    proc.stderr?.on('data', (b: Buffer) => this.stderr.push(b.toString()));
    conn.onNotification('textDocument/publishDiagnostics', (p: PublishDiagnosticsParams) => {
      const list = this.received.get(p.uri) ?? [];
      list.push(p);
      this.received.set(p.uri, list);
      for (let i = this.waiters.length - 1; i >= 0; i--) {
        const w = this.waiters[i];
        if (w.uri === p.uri && (w.version === undefined || w.version === p.version)) {
          this.waiters.splice(i, 1);
          w.resolve(p.diagnostics);
        }
      }
    });
    conn.onRequest('workspace/configuration', (params: { items: { section?: string; scopeUri?: string }[] }) => {
      this.configurationRequests.push(params);
      return params.items.map(it => (it.section && this.opts.configuration ? this.opts.configuration[it.section] ?? null : null));
    });
    conn.onRequest('client/registerCapability', () => null);
    conn.onRequest('window/workDoneProgress/create', () => null);
    conn.onNotification('window/logMessage', () => undefined);
    conn.listen();
  }

  static async start(opts: StartOptions = {}): Promise<LspClient> {
    const script = opts.script ?? await serverScript();
    const proc = spawn(process.execPath, [script, '--stdio'], { stdio: ['pipe', 'pipe', 'pipe'] });
    const conn = createMessageConnection(new StreamMessageReader(proc.stdout!), new StreamMessageWriter(proc.stdin!));
    const client = new LspClient(proc, conn, opts);
    const folders = opts.workspaceFolders ?? [];
    const params: InitializeParams = {
      processId: process.pid,
      rootUri: folders[0] ? fileUri(folders[0]) : null,
      workspaceFolders: folders.map(f => ({ uri: fileUri(f), name: f })),
      initializationOptions: opts.initializationOptions,
      capabilities: {
        workspace: {
          configuration: opts.configuration !== undefined,
          didChangeConfiguration: { dynamicRegistration: true },
          didChangeWatchedFiles: { dynamicRegistration: true },
        },
        textDocument: {
          publishDiagnostics: { versionSupport: true },
          completion: { completionItem: { documentationFormat: ['markdown', 'plaintext'] } },
          hover: { contentFormat: ['markdown', 'plaintext'] },
        },
      },
    };
    client.initializeResult = await conn.sendRequest('initialize', params);
    await conn.sendNotification('initialized', {});
    return client;
  }

  /** Open a document; resolves with the diagnostics published for this version. */
  open(uri: string, text: string): Promise<Diagnostic[]> {
    const version = 1;
    this.versions.set(uri, version);
    const done = this.diagnosticsFor(uri, version);
    void this.conn.sendNotification('textDocument/didOpen', { textDocument: { uri, languageId: 'kprobe', version, text } });
    return done;
  }

  /** Replace a document's whole text; resolves with the diagnostics of the new version. */
  change(uri: string, text: string): Promise<Diagnostic[]> {
    const version = (this.versions.get(uri) ?? 0) + 1;
    this.versions.set(uri, version);
    const done = this.diagnosticsFor(uri, version);
    void this.conn.sendNotification('textDocument/didChange', { textDocument: { uri, version }, contentChanges: [{ text }] });
    return done;
  }

  close(uri: string): void {
    void this.conn.sendNotification('textDocument/didClose', { textDocument: { uri } });
  }

  /** Diagnostics published for (uri, version): already received or the next such notification. */
  diagnosticsFor(uri: string, version: number): Promise<Diagnostic[]> {
    const got = (this.received.get(uri) ?? []).find(p => p.version === version);
    if (got) return Promise.resolve(got.diagnostics);
    return new Promise(resolve => this.waiters.push({ uri, version, resolve }));
  }

  /** The next diagnostics published for uri (for re-checks that keep the version: settings, image rebuilt). */
  nextDiagnostics(uri: string): Promise<Diagnostic[]> {
    return new Promise(resolve => this.waiters.push({ uri, resolve }));
  }

  async watchedFilesChanged(paths: string[]): Promise<void> {
    await this.conn.sendNotification('workspace/didChangeWatchedFiles', { changes: paths.map(p => ({ uri: fileUri(p), type: 2 })) });
  }

  async configurationChanged(settings: unknown): Promise<void> {
    await this.conn.sendNotification('workspace/didChangeConfiguration', { settings });
  }

  async completion(uri: string, position: Position): Promise<CompletionItem[]> {
    const r = await this.conn.sendRequest<CompletionItem[] | CompletionList | null>('textDocument/completion', { textDocument: { uri }, position });
    if (!r) return [];
    return Array.isArray(r) ? r : r.items;
  }

  hover(uri: string, position: Position): Promise<Hover | null> {
    return this.conn.sendRequest<Hover | null>('textDocument/hover', { textDocument: { uri }, position });
  }

  folding(uri: string): Promise<FoldingRange[]> {
    return this.conn.sendRequest<FoldingRange[]>('textDocument/foldingRange', { textDocument: { uri } });
  }

  async stop(): Promise<number | null> {
    try {
      await this.conn.sendRequest('shutdown');
      await this.conn.sendNotification('exit');
    } catch {
      this.proc.kill();
    }
    const code = await this.exited;
    this.conn.dispose();
    return code;
  }
}

/** Position of the `nth` occurrence of `needle` in text, moved by `delta` characters (0-based line/character). */
export function positionOf(text: string, needle: string, delta = 0, nth = 0): Position {
  let at = -1;
  for (let k = 0; k <= nth; k++) {
    at = text.indexOf(needle, at + 1);
    if (at < 0) throw new Error(`${JSON.stringify(needle)} (#${nth}) not in text`);
  }
  const offset = at + delta;
  const before = text.slice(0, offset);
  const line = before.split('\n').length - 1;
  return { line, character: offset - (before.lastIndexOf('\n') + 1) };
}

/** Position just after `needle` (where a user who typed it has the cursor). */
export function after(text: string, needle: string, nth = 0): Position {
  return positionOf(text, needle, needle.length, nth);
}

export function hoverText(h: Hover | null): string {
  if (!h) return '';
  const c = h.contents;
  if (typeof c === 'string') return c;
  if (Array.isArray(c)) return c.map(x => (typeof x === 'string' ? x : x.value)).join('\n');
  return c.value;
}
