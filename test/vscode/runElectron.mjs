#!/usr/bin/env node
// Runs the same integration suite in a desktop VS Code through
// @vscode/test-electron (downloads VS Code unless KPROBE_VSCODE_EXECUTABLE
// points at an installed `code` binary). Not used in CI: there the suite runs
// in code-server + headless chromium (test/vscode/run.mjs).
//   npm run build && npm run compile-tests && node test/vscode/runElectron.mjs
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runTests } from '@vscode/test-electron';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const workspace = resolve(process.env.KPROBE_VSCODE_WORKSPACE ?? join(repo, 'examples'));

try {
  await runTests({
    extensionDevelopmentPath: repo,
    extensionTestsPath: join(repo, 'out', 'test', 'vscode', 'suite', 'index.js'),
    vscodeExecutablePath: process.env.KPROBE_VSCODE_EXECUTABLE || undefined,
    version: process.env.KPROBE_VSCODE_VERSION || '1.100.3',
    launchArgs: [workspace, '--disable-extensions', '--disable-workspace-trust', '--skip-welcome', '--skip-release-notes'],
  });
  process.exit(0);
} catch (e) {
  console.error(`integration suite failed: ${e instanceof Error ? e.message : e}`);
  process.exit(1);
}
