/**
 * kprobe language server (LSP over stdio: `node dist/languageServer.js --stdio`).
 * Diagnostics, completion, hover and folding for .kprobe files.
 */
import {
  createConnection, ProposedFeatures, TextDocuments, TextDocumentSyncKind,
  DidChangeConfigurationNotification, DidChangeWatchedFilesNotification, type InitializeResult,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { KprobeService } from './service';
import { SettingsSource } from './settings';
import { uriToPath } from './imageResolve';
import { foldingRanges } from './folding';
import { TRIGGER_CHARACTERS } from './constants';

const connection = createConnection(ProposedFeatures.all);
const documents = new TextDocuments(TextDocument);
const settings = new SettingsSource(connection);
const service = new KprobeService();
let folders: string[] = [];
let dynamicConfigRegistration = false;
let dynamicWatchRegistration = false;

connection.onInitialize((params): InitializeResult => {
  const caps = params.capabilities;
  settings.pull = !!caps.workspace?.configuration;
  dynamicConfigRegistration = !!caps.workspace?.didChangeConfiguration?.dynamicRegistration;
  dynamicWatchRegistration = !!caps.workspace?.didChangeWatchedFiles?.dynamicRegistration;
  settings.setInitializationOptions(params.initializationOptions);
  folders = (params.workspaceFolders ?? [])
    .map(f => uriToPath(f.uri))
    .filter((p): p is string => p !== undefined);
  if (folders.length === 0 && params.rootUri) {
    const root = uriToPath(params.rootUri);
    if (root) folders = [root];
  }
  return {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      completionProvider: { triggerCharacters: TRIGGER_CHARACTERS, resolveProvider: false },
      hoverProvider: true,
      foldingRangeProvider: true,
    },
    serverInfo: { name: 'kprobe-language-server', version: '0.1.0' },
  };
});

connection.onInitialized(() => {
  if (settings.pull && dynamicConfigRegistration) {
    void connection.client.register(DidChangeConfigurationNotification.type, undefined);
  }
  // re-check open documents when a kernel image is rebuilt (the image cache keys on mtime)
  if (dynamicWatchRegistration) {
    void connection.client.register(DidChangeWatchedFilesNotification.type, { watchers: [{ globPattern: '**/*.elf' }] });
  }
});

connection.onDidChangeWatchedFiles(() => {
  for (const d of documents.all()) void validate(d);
});

async function envFor(doc: TextDocument) {
  const s = await settings.forDocument(doc.uri);
  return service.env(doc, s.image, folders);
}

async function validate(doc: TextDocument): Promise<void> {
  const version = doc.version;
  try {
    const env = await envFor(doc);
    const current = documents.get(doc.uri);
    if (!current || current.version !== version) return; // a newer version is being validated
    await connection.sendDiagnostics({ uri: doc.uri, version, diagnostics: service.diagnostics(doc, env) });
  } catch (e) {
    connection.console.error(`kprobe: checking ${doc.uri} failed: ${e instanceof Error ? e.stack ?? e.message : String(e)}`);
  }
}

connection.onDidChangeConfiguration(change => {
  settings.changed(change.settings);
  for (const d of documents.all()) void validate(d);
});

documents.onDidChangeContent(change => { void validate(change.document); });
documents.onDidClose(e => {
  settings.forget(e.document.uri);
  void connection.sendDiagnostics({ uri: e.document.uri, diagnostics: [] });
});

connection.onCompletion(async params => {
  const doc = documents.get(params.textDocument.uri);
  if (!doc) return [];
  return service.completions(doc, doc.offsetAt(params.position), await envFor(doc));
});

connection.onHover(async params => {
  const doc = documents.get(params.textDocument.uri);
  if (!doc) return null;
  return service.hover(doc, doc.offsetAt(params.position), await envFor(doc));
});

connection.onFoldingRanges(params => {
  const doc = documents.get(params.textDocument.uri);
  return doc ? foldingRanges(doc.getText()) : [];
});

documents.listen(connection);
connection.listen();
