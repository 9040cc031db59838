import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import { KprobeAdapterFactory } from './adapterFactory';
import { KprobeConfigurationProvider } from './configProvider';
import { Command, DEBUG_TYPE, DISASSEMBLY_SCHEME, OUTPUT_CHANNEL, TestCommand, View } from './constants';
import { DisassemblyProvider } from './disassembly';
import { registerProbeCommands } from './probeCommands';
import { ProbeStore } from './probeStore';
import { ProbeTreeProvider } from './probeTree';
import { ModuleTreeProvider } from './moduleTree';
import { DebugRegTreeProvider } from './debugRegTree';
import { startLanguageClient } from './languageClient';
import { TimelinePanel } from './timelineView';
import { HistogramPanel } from './histogramView';

/** What activate() returns; the integration tests read the views through it. */
export interface KprobeExtensionApi {
  readonly configProvider: KprobeConfigurationProvider;
  readonly adapterFactory: KprobeAdapterFactory;
  readonly probes: ProbeStore;
  readonly kprobesTree: ProbeTreeProvider;
  readonly uprobesTree: ProbeTreeProvider;
  readonly modulesTree: ModuleTreeProvider;
  readonly debugRegsTree: DebugRegTreeProvider;
  /** the probe-hit timeline and latency histogram webviews */
  readonly timeline: TimelinePanel;
  readonly histograms: HistogramPanel;
  /** settles once the language client started or failed (undefined then) */
  readonly languageClient: Promise<LanguageClient | undefined>;
}

let client: Promise<LanguageClient | undefined> | undefined;

export function activate(context: vscode.ExtensionContext): KprobeExtensionApi {
  const log = vscode.window.createOutputChannel(OUTPUT_CHANNEL, { log: true });
  const configProvider = new KprobeConfigurationProvider();
  const adapterFactory = new KprobeAdapterFactory(context.extensionPath);
  const probes = new ProbeStore();
  const kprobesTree = new ProbeTreeProvider(probes, 'kprobes');
  const uprobesTree = new ProbeTreeProvider(probes, 'uprobes');
  const modulesTree = new ModuleTreeProvider(probes);
  const debugRegsTree = new DebugRegTreeProvider(probes);
  const timeline = new TimelinePanel(probes, context.extensionUri, log);
  const histograms = new HistogramPanel(probes, context.extensionUri, log);
  context.subscriptions.push(
    log, configProvider, probes, kprobesTree, uprobesTree, modulesTree, debugRegsTree,
    configProvider.onDidReportError(m => log.error(m)),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, configProvider, vscode.DebugConfigurationProviderTriggerKind.Initial),
    vscode.debug.registerDebugConfigurationProvider(DEBUG_TYPE, {
      provideDebugConfigurations: f => configProvider.provideDebugConfigurations(f),
    }, vscode.DebugConfigurationProviderTriggerKind.Dynamic),
    vscode.debug.registerDebugAdapterDescriptorFactory(DEBUG_TYPE, adapterFactory),
    vscode.window.createTreeView(View.kprobes, { treeDataProvider: kprobesTree, showCollapseAll: false }),
    vscode.window.createTreeView(View.uprobes, { treeDataProvider: uprobesTree, showCollapseAll: false }),
    vscode.window.createTreeView(View.modules, { treeDataProvider: modulesTree, showCollapseAll: false }),
    vscode.window.createTreeView(View.debugRegisters, { treeDataProvider: debugRegsTree, showCollapseAll: true }),
    vscode.workspace.registerTextDocumentContentProvider(DISASSEMBLY_SCHEME, new DisassemblyProvider(id => probes.sessionById(id))),
    ...registerProbeCommands(probes, log),
    timeline, histograms,
    vscode.commands.registerCommand(Command.showTimeline, () => timeline.show()),
    vscode.commands.registerCommand(Command.showHistograms, () => histograms.show()),
    vscode.commands.registerCommand(TestCommand.hitViewsRendered, () => ({ timeline: timeline.lastRendered, histograms: histograms.lastRendered })),
  );
  client = startLanguageClient(context.extensionPath, log).catch(e => {
    log.error(`language client: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  });
  log.info('kprobe-debug activated');
  return { configProvider, adapterFactory, probes, kprobesTree, uprobesTree, modulesTree, debugRegsTree, timeline, histograms, languageClient: client };
}

export async function deactivate(): Promise<void> {
  const c = await client;
  client = undefined;
  if (c) await c.stop().catch(() => undefined);
}
