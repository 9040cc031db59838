/** Every string id the extension registers or contributes (package.json must match). */
export const EXTENSION_ID = 'kprobe-debug.kprobe-debug';
export { KPROBE_DEBUG_TYPE as DEBUG_TYPE } from '../adapter/dapCustom';
export const LANGUAGE_ID = 'kprobe';

export const View = {
  kprobes: 'kprobe.kprobesView',
  uprobes: 'kprobe.uprobesView',
  modules: 'kprobe.modulesView',
  debugRegisters: 'kprobe.debugRegistersView',
} as const;

export const Command = {
  // per probe (view item context menu / inline)
  enableProbe: 'kprobe.probe.enable',
  disableProbe: 'kprobe.probe.disable',
  unregisterProbe: 'kprobe.probe.unregister',
  revealSource: 'kprobe.probe.revealSource',
  openDisassembly: 'kprobe.probe.openDisassembly',
  // view title: /sys/kernel/debug/kprobes/enabled
  enableAll: 'kprobe.probes.enableAll',
  disableAll: 'kprobe.probes.disableAll',
  // view title: sysctl debug.kprobes_optimization
  enableOptimization: 'kprobe.probes.enableOptimization',
  disableOptimization: 'kprobe.probes.disableOptimization',
  refresh: 'kprobe.probes.refresh',
  // Modules view: insmod (view title), rmmod (item)
  loadModule: 'kprobe.modules.load',
  unloadModule: 'kprobe.module.unload',
  // the probe-hit log's webviews (Kprobes view title, palette)
  showTimeline: 'kprobe.showTimeline',
  showHistograms: 'kprobe.showHistograms',
} as const;

/**
 * Commands for the integration tests only (registered, not contributed):
 * what the hit views' scripts last reported drawing.
 */
export const TestCommand = {
  /** returns { timeline?: TimelineRendered, histograms?: HistogramsRendered } */
  hitViewsRendered: 'kprobe._hitViewsRendered',
} as const;

/** Context keys used in package.json `when` clauses. */
export const ContextKey = {
  /** a kprobe session is active and its probe state known */
  sessionActive: 'kprobe.sessionActive',
  globalEnabled: 'kprobe.probesEnabled',
  optimization: 'kprobe.optimizationEnabled',
} as const;

/** TreeItem.contextValue values used in package.json `view/item/context` menus. */
export const ItemContext = {
  enabledProbe: 'kprobe.probe.enabled',
  disabledProbe: 'kprobe.probe.disabled',
  goneProbe: 'kprobe.probe.gone',
  /** a row of the last state of an ended session: only Reveal Source applies */
  endedProbe: 'kprobe.probe.ended',
  placeholder: 'kprobe.placeholder',
  /** a loaded module that can be asked to unload / one whose init or exit is running */
  liveModule: 'kprobe.module.live',
  busyModule: 'kprobe.module.busy',
  /** a process child of a Uprobes row (no commands of its own) */
  uprobeProcess: 'kprobe.uprobeProcess',
  /** a CPU of the Debug Registers view, and one of its registers */
  debugCpu: 'kprobe.debugRegisters.cpu',
  debugRegister: 'kprobe.debugRegisters.register',
} as const;

export const Setting = {
  section: 'kprobe',
  /** port of an adapter started with `node dist/adapter.js --server=PORT` (0 = spawn one) */
  debugServer: 'debugServer',
  languageServerEnable: 'languageServer.enable',
} as const;

/** URI scheme of the read-only disassembly documents opened from the views. */
export const DISASSEMBLY_SCHEME = 'kprobe-disasm';

export const OUTPUT_CHANNEL = 'Kprobe';

/** Where F5 looks for kernel images when launch.json names none. */
export const ELF_SEARCH_GLOBS = ['**/kernel/build/*.elf', '**/*.elf'] as const;
export const ELF_SEARCH_EXCLUDE = '**/{node_modules,.git,out,dist}/**';
