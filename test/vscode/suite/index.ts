// Mocha runner loaded by VS Code's extension host (extensionTestsPath). Used
// by both test/vscode/run.mjs (code-server + headless chromium) and
// test/vscode/runElectron.mjs (@vscode/test-electron, desktop VS Code).
// Loads every *.itest.js next to this file, prints the markers run.mjs
// filters on, and settles with an error when any test failed.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { format } from 'node:util';
import Mocha from 'mocha';

// Must match test/vscode/run.mjs.
export const BEGIN_MARKER = '@@kprobe-itest-begin@@';
export const END_MARKER = '@@kprobe-itest-end@@';

function findSuites(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) findSuites(p, out);
    else if (name.endsWith('.itest.js')) out.push(p);
  }
  return out;
}

export function run(): Promise<void> {
  // The extension host forwards console arguments unformatted; hand it
  // finished lines.
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => console.log(format(...args));
  const mocha = new Mocha({ ui: 'tdd', color: false, reporter: 'spec', timeout: 60_000 });
  const grep = process.env.KPROBE_ITEST_GREP;
  if (grep) mocha.grep(grep);
  for (const f of findSuites(__dirname)) mocha.addFile(f);
  console.log(BEGIN_MARKER);
  return new Promise((resolve, reject) => {
    try {
      const runner = mocha.run(failures => {
        const passed = runner.stats?.passes ?? 0;
        const failed = Math.max(failures, runner.stats?.failures ?? 0);
        console.log(`${END_MARKER} passed=${passed} failed=${failed}`);
        if (failed > 0) reject(new Error(`${failed} integration test(s) failed`));
        else if (passed === 0) reject(new Error('no integration tests ran'));
        else resolve();
      });
    } catch (e) {
      console.error(e);
      console.log(`${END_MARKER} passed=0 failed=1`);
      reject(e instanceof Error ? e : new Error(String(e)));
    }
  });
}
