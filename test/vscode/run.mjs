#!/usr/bin/env node
// Runs the extension's integration suite (out/test/vscode/suite/index.js) in a
// real VS Code: the code-server 4.100.3 build (test/vscode/server) serving a
// workbench to a headless Debian chromium driven by playwright-core. The
// extension and the suite run in the server's node extension host.
//
//   node test/vscode/run.mjs            (after `npm run build && npm run compile-tests`)
//
// Prints only the extension host's output between the suite's markers, ends
// with `N passed, N failed` and exits with the suite's code (1 on any failure,
// 2 on a harness error or timeout). Chromium and the server's process group
// are always killed.
//
// Page bridge: what the workbench shows (DOM state such as the Disassembly
// view's highlighted row) cannot be read from the extension host, so this
// script serves GET http://127.0.0.1:PORT/<query> and answers it from the
// page through playwright; the suite finds PORT in KPROBE_ITEST_PAGE_BRIDGE
// (code-server's extension host inherits the environment). See PAGE_QUERIES
// and PAGE_ACTIONS.
//
// Screenshots: a suite line `SCREENSHOT <name>` (console.log) or the bridge's
// GET /screenshot/<name> (which answers once the file is written) saves the
// workbench as test-output/vscode/<name>.png (ignored by git) and prints its
// path.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import { createServer } from 'node:http';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');
const serverEntry = join(here, 'server', 'node_modules', 'code-server', 'out', 'node', 'entry.js');
const suiteIndex = join(repo, 'out', 'test', 'vscode', 'suite', 'index.js');
const workspace = resolve(process.env.KPROBE_VSCODE_WORKSPACE ?? join(repo, 'examples'));
const chromiumPath = process.env.KPROBE_CHROMIUM ?? '/usr/bin/chromium';
// the whole suite's bound: two of its tests boot Debian's kernel (each 1-3 minutes of CPU on a loaded host)
const timeoutMs = Number(process.env.KPROBE_VSCODE_TIMEOUT_MS ?? 20 * 60 * 1000);
const verbose = !!process.env.KPROBE_VSCODE_VERBOSE;
const screenshotDir = resolve(process.env.KPROBE_VSCODE_SCREENSHOTS ?? join(repo, 'test-output', 'vscode'));

// Must match test/vscode/suite/index.ts.
const BEGIN = '@@kprobe-itest-begin@@';
const END = '@@kprobe-itest-end@@';

const t0 = Date.now();
const elapsed = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
const log = (msg) => process.stdout.write(`[vscode-itest ${elapsed()}] ${msg}\n`);

let server;        // ChildProcess of code-server (own process group)
let browser;       // playwright Browser
let tmp;           // temp folder holding everything code-server writes
let bridge;        // http.Server of the page bridge
let page;          // playwright Page of the workbench (set once loaded)
let finished = false;

async function cleanup() {
  if (bridge) { bridge.close(); bridge.closeAllConnections?.(); bridge = undefined; }
  if (browser) {
    const b = browser; browser = undefined;
    await Promise.race([b.close().catch(() => {}), new Promise(r => setTimeout(r, 5000))]);
  }
  if (server && server.exitCode === null && server.signalCode === null) {
    try { process.kill(-server.pid, 'SIGKILL'); } catch { /* already gone */ }
  }
  server = undefined;
  if (tmp && !process.env.KPROBE_VSCODE_KEEP_TMP) {
    try { rmSync(tmp, { recursive: true, force: true }); } catch { /* best effort */ }
  }
}

async function finish(code, reason) {
  if (finished) return;
  finished = true;
  if (reason) process.stdout.write(`[vscode-itest ${elapsed()}] ${reason}\n`);
  await cleanup();
  process.exit(code);
}

function ensureServer() {
  if (existsSync(serverEntry) && existsSync(join(dirname(serverEntry), '..', '..', 'lib', 'vscode', 'node_modules'))) return;
  log('code-server missing: running test/vscode/install-server.sh');
  const r = spawnSync('bash', [join(here, 'install-server.sh')], { stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`test/vscode/install-server.sh failed (exit ${r.status})`);
}

function startServer() {
  tmp = mkdtempSync(join(tmpdir(), 'kprobe-vscode-'));
  const dirs = {};
  for (const d of ['config', 'user-data', 'extensions', 'xdg-data', 'xdg-config', 'xdg-cache', 'xdg-state', 'xdg-runtime', 'tmp']) {
    dirs[d] = join(tmp, d);
    mkdirSync(dirs[d], { recursive: true, mode: 0o700 });
  }
  const configFile = join(dirs.config, 'config.yaml');
  writeFileSync(configFile, 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n');
  // Keep the workbench quiet and deterministic.
  mkdirSync(join(dirs['user-data'], 'User'), { recursive: true });
  writeFileSync(join(dirs['user-data'], 'User', 'settings.json'), JSON.stringify({
    'workbench.startupEditor': 'none',
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'update.mode': 'none',
    'security.workspace.trust.enabled': false,
    'git.enabled': false,
    'files.watcherExclude': { '**/node_modules/**': true },
  }, null, 2));
  const env = {
    ...process.env,
    VSCODE_CLI: '1',
    XDG_DATA_HOME: dirs['xdg-data'],
    XDG_CONFIG_HOME: dirs['xdg-config'],
    XDG_CACHE_HOME: dirs['xdg-cache'],
    XDG_STATE_HOME: dirs['xdg-state'],
    XDG_RUNTIME_DIR: dirs['xdg-runtime'],
    TMPDIR: dirs.tmp,
  };
  delete env.ELECTRON_RUN_AS_NODE;
  delete env.VSCODE_IPC_HOOK_CLI;
  const args = [serverEntry, '--bind-addr', '127.0.0.1:0', '--auth', 'none', '--log', 'info',
    '--config', configFile, '--user-data-dir', dirs['user-data'], '--extensions-dir', dirs.extensions,
    '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override'];
  server = spawn(process.execPath, args, { env, cwd: repo, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolvePort, reject) => {
    let found = false;
    const onLine = (line) => {
      if (verbose) process.stdout.write(`[server] ${line}\n`);
      const m = !found && /HTTP server listening on https?:\/\/([0-9.]+):(\d+)/.exec(line);
      if (m) { found = true; resolvePort(Number(m[2])); }
    };
    createInterface({ input: server.stdout }).on('line', onLine);
    createInterface({ input: server.stderr }).on('line', onLine);
    server.on('exit', (code, sig) => {
      if (!found) reject(new Error(`code-server exited before listening (code ${code}, signal ${sig})`));
      else if (!finished) finish(2, `code-server exited unexpectedly (code ${code}, signal ${sig})`);
    });
    server.on('error', reject);
  });
}

/**
 * Page queries the suite may ask for, each waiting (playwright waitForFunction,
 * no sleeps) until the page can answer, then returning JSON.
 *   disassembly-current-row: the instruction cell (text, background) of the
 *   Disassembly view's row marked with the top stack frame
 *   (codicon-debug-stackframe), i.e. the highlighted instruction; waits until
 *   that row is rendered.
 *   callstack-threads?thread=T&state=RE: the Call Stack view's thread rows
 *   ({name, state}: the state label VS Code draws), once it shows two or
 *   more threads and (when given) thread T's label matches RE.
 * Parameters come as a query string and are passed to the query.
 */
const PAGE_QUERIES = {
  // the Call Stack view's thread rows: name and the state label VS Code shows ("PAUSED ON BREAKPOINT", "PAUSED")
  'callstack-threads': (/** @type {{thread?: string, state?: string}} */ p) => {
    const rows = [...document.querySelectorAll('.monaco-list-row .thread')].map(t => ({
      name: t.querySelector('.name')?.textContent ?? '',
      state: t.querySelector('.state')?.textContent ?? '',
    }));
    if (rows.length < 2) return null;
    return !p.thread || rows.some(r => r.name.startsWith(p.thread) && new RegExp(p.state ?? '', 'i').test(r.state)) ? rows : null;
  },
  'disassembly-current-row': () => {
    const row = document.querySelector('.disassembly-view .codicon-debug-stackframe')?.closest('.monaco-list-row');
    const cell = row?.querySelector('.instruction');
    return cell ? { text: cell.innerText, background: cell.style.background } : null;
  },
  // the Debug Console's rendered text once it shows `includes` (its list renders the rows in view: the latest output)
  'repl-text': (/** @type {{includes: string}} */ p) => {
    const text = [...document.querySelectorAll('.repl .monaco-list-row')].map(r => r.textContent ?? '').join('\n');
    return text.includes(p.includes) ? text : null;
  },
};

/** Save the workbench as <screenshotDir>/<name>.png; returns the path. */
async function screenshot(name) {
  if (!page) throw new Error('the workbench page is not loaded');
  const safe = String(name).replace(/[^A-Za-z0-9._-]/g, '_') || 'screenshot';
  mkdirSync(screenshotDir, { recursive: true });
  const path = join(screenshotDir, `${safe}.png`);
  await page.screenshot({ path });
  process.stdout.write(`[vscode-itest ${elapsed()}] screenshot ${path}\n`);
  return path;
}

/** The frame (a webview's inner document) in which `selector` matches, waiting up to `ms`. */
async function frameWith(selector, ms = 20_000) {
  const until = Date.now() + ms;
  for (;;) {
    for (const f of page.frames()) {
      if (await f.$(selector).catch(() => null)) return f;
    }
    if (Date.now() > until) throw new Error(`no frame shows ${selector}`);
    await page.waitForTimeout(100);
  }
}

/**
 * Page actions the suite may ask for (GET /<name>), acting on the page
 * through playwright as a user would:
 *   timeline-click-hit: clicks the first hit mark of the timeline webview
 *   (rect.hit in its frame) and returns the seq it carries.
 *   click-link?text=T: clicks the visible link (or button) of the workbench
 *   whose text is T (a view's welcome link: "create a launch.json file").
 *   quick-pick?text=T: clicks the first row of the open quick pick whose
 *   label contains T; returns the labels it offered.
 *   variables-menu?expand=S&name=V&item=I: in the Variables view, expands
 *   the scope S (when given), right-clicks the variable V and clicks the
 *   context menu entry I ("Break on Value Change"); returns the entries the
 *   menu offered. The other scopes are folded first and the list is scrolled
 *   to the row (the view is short and its list renders only the rows in sight).
 * Parameters come as a query string (GET /quick-pick?text=Kprobe).
 */
const PAGE_ACTIONS = {
  'click-link': async ({ text }) => {
    const link = page.locator('a, .monaco-button, .monaco-link').filter({ hasText: new RegExp(`^\\s*${escapeRe(text)}\\s*$`) }).first();
    await link.waitFor({ state: 'visible', timeout: 20_000 });
    await link.click();
    return { clicked: text };
  },
  'quick-pick': async ({ text }) => {
    const rows = page.locator('.quick-input-widget .monaco-list-row');
    await rows.first().waitFor({ state: 'visible', timeout: 20_000 });
    const labels = await rows.allInnerTexts();
    const row = rows.filter({ hasText: text }).first();
    await row.waitFor({ state: 'visible', timeout: 20_000 });
    await row.click();
    return { labels };
  },
  'variables-menu': async ({ expand, name, item }) => {
    // the Variables view's tree: the list holding scope rows (aria-label "Scope NAME")
    const view = page.locator('.monaco-list', { has: page.locator('.monaco-list-row[aria-label^="Scope "]') }).first();
    if (expand) {
      await view.locator('.monaco-list-row[aria-label^="Scope "]').first().waitFor({ state: 'visible', timeout: 20_000 });
      // the view is short: fold the other scopes so that the one asked for and its variables are rendered
      for (;;) {
        const open = view.locator(`.monaco-list-row[aria-label^="Scope "][aria-expanded="true"]:not([aria-label="Scope ${expand}"])`);
        if (!await open.count()) break;
        await open.first().click({ timeout: 20_000 });
      }
      await view.locator(`.monaco-list-row[aria-label="Scope ${expand}"]`).first().waitFor({ state: 'visible', timeout: 20_000 });
      const collapsed = view.locator(`.monaco-list-row[aria-label="Scope ${expand}"][aria-expanded="false"]`);
      if (await collapsed.count()) await collapsed.first().click({ timeout: 20_000 });
    }
    // a variable row reads "name = value"
    const row = view.locator('.monaco-list-row:not([aria-label^="Scope "])').filter({ hasText: new RegExp(`^\\s*${escapeRe(name)}\\s*[=:]`) }).first();
    // the list renders only the rows in sight: scroll down through the scope until the row is there
    await view.locator('.monaco-list-row:not([aria-label^="Scope "])').first().waitFor({ state: 'visible', timeout: 20_000 });
    for (let step = 0; step < 40 && !await row.isVisible(); step++) {
      await view.hover();
      await page.mouse.wheel(0, 22);
      // the rows scrolled into sight render after the wheel event: wait for ours a moment before the next step
      await row.waitFor({ state: 'visible', timeout: 250 }).catch(() => undefined);
    }
    await row.waitFor({ state: 'visible', timeout: 20_000 });
    await row.click({ button: 'right' });
    const entry = page.locator('.monaco-menu .action-item .action-label').filter({ hasText: new RegExp(`^${escapeRe(item)}$`) }).first();
    await entry.waitFor({ state: 'visible', timeout: 20_000 });
    const offered = await page.locator('.monaco-menu .action-item .action-label').allInnerTexts();
    // the workbench's menu can drop a click that lands while it is still being laid out (the menu then stays
    // open): the entry counts as chosen once the menu has closed, else it is chosen again from the keyboard
    await entry.click();
    const menu = page.locator('.monaco-menu').first();
    for (let attempt = 0; attempt < 3; attempt++) {
      if (await menu.waitFor({ state: 'hidden', timeout: 2_000 }).then(() => true, () => false)) break;
      await entry.hover();
      await page.keyboard.press('Enter');
    }
    return { offered: offered.filter(t => t.trim() !== '') };
  },
  'timeline-click-hit': async () => {
    const frame = await frameWith('svg rect.hit');
    const mark = await frame.$('svg rect.hit');
    const seq = Number(await mark.getAttribute('data-seq'));
    await mark.click();
    return { seq };
  },
};

function escapeRe(t) {
  return String(t).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function startPageBridge() {
  bridge = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://bridge');
    const params = Object.fromEntries(url.searchParams);
    const name = url.search ? url.pathname.replace(/^\//, '') : (req.url ?? '').replace(/^\//, '');
    const reply = (status, body) => { res.writeHead(status, { 'content-type': 'application/json' }); res.end(JSON.stringify(body)); };
    if (!page) return reply(503, { error: 'the workbench page is not loaded' });
    if (name.startsWith('screenshot/')) {
      try { return reply(200, { path: await screenshot(decodeURIComponent(name.slice('screenshot/'.length))) }); }
      catch (e) { return reply(500, { error: `screenshot failed: ${e?.message ?? e}` }); }
    }
    if (PAGE_ACTIONS[name]) {
      try { return reply(200, await PAGE_ACTIONS[name](params)); }
      catch (e) { return reply(500, { error: `page action ${name} failed: ${e?.message ?? e}` }); }
    }
    const query = PAGE_QUERIES[name];
    if (!query) return reply(404, { error: `unknown page query "${name}" (known: ${[...Object.keys(PAGE_QUERIES), ...Object.keys(PAGE_ACTIONS), 'screenshot/<name>'].join(', ')})` });
    try {
      const handle = await page.waitForFunction(query, params, { timeout: 20_000 });
      reply(200, await handle.jsonValue());
    } catch (e) {
      reply(500, { error: `page query ${name} failed: ${e?.message ?? e}` });
    }
  });
  return new Promise((resolvePort, reject) => {
    bridge.once('error', reject);
    bridge.listen(0, '127.0.0.1', () => resolvePort(bridge.address().port));
  });
}

/** Extension-host output filter: echo what lies between the suite's markers. */
function makeLogSink() {
  let inside = false;
  let summary;
  return {
    summary: () => summary,
    line(type, text) {
      for (const l of String(text).split('\n')) {
        if (l.includes(BEGIN)) { inside = true; continue; }
        if (l.includes(END)) {
          inside = false;
          const m = /passed=(\d+) failed=(\d+)/.exec(l);
          if (m) summary = { passed: Number(m[1]), failed: Number(m[2]) };
          continue;
        }
        if (inside || verbose) process.stdout.write(`${verbose && !inside ? `[${type}] ` : ''}${stripExtHostPrefix(l)}\n`);
        const shot = inside && /^SCREENSHOT (\S+)\s*$/.exec(stripExtHostPrefix(l).trim());
        if (shot) screenshot(shot[1]).catch(e => process.stdout.write(`[vscode-itest] screenshot ${shot[1]} failed: ${e?.message ?? e}\n`));
      }
    },
  };
}

// The extension host's console lines are forwarded with a prefix such as
// "[Extension Host] " and sometimes with %c style arguments; keep the text.
function stripExtHostPrefix(l) {
  return l.replace(/^\s*\[Extension Host\]\s?/, '').replace(/%c/g, '');
}

function argsToText(args) {
  if (typeof args === 'string') return args;
  if (Array.isArray(args)) return args.map(a => typeof a === 'string' ? a : JSON.stringify(a)).join(' ');
  return JSON.stringify(args);
}

async function main() {
  if (!existsSync(suiteIndex)) throw new Error(`${suiteIndex} missing: run \`npm run compile-tests\` first`);
  if (!existsSync(join(repo, 'dist', 'extension.js'))) throw new Error('dist/extension.js missing: run `npm run build` first');
  if (!existsSync(workspace)) throw new Error(`test workspace ${workspace} missing`);
  if (!existsSync(chromiumPath)) throw new Error(`${chromiumPath} missing (apt-get install -y chromium)`);
  ensureServer();
  // The overall limit starts once the server is installed (a first install takes ~40-60 s).
  setTimeout(() => {
    finish(2, `TIMEOUT: the integration suite did not finish within ${timeoutMs / 1000} s\n0 passed, 1 failed`);
  }, timeoutMs);

  process.env.KPROBE_ITEST_PAGE_BRIDGE = `http://127.0.0.1:${await startPageBridge()}`;
  const port = await startServer();
  const authority = `127.0.0.1:${port}`;
  log(`code-server listening on ${authority}`);

  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
  });
  page = await browser.newPage();
  const sink = makeLogSink();
  let resolveExit;
  const exitCode = new Promise(r => { resolveExit = r; });
  await page.exposeFunction('codeAutomationLog', (type, args) => sink.line(type, argsToText(args)));
  await page.exposeFunction('codeAutomationExit', (code) => resolveExit(Number(code)));
  if (verbose) page.on('console', m => process.stdout.write(`[page ${m.type()}] ${m.text()}\n`));
  page.on('pageerror', e => { if (verbose) process.stdout.write(`[page error] ${e.message}\n`); });

  const remote = (p) => `vscode-remote://${authority}${p}`;
  const payload = [
    ['extensionDevelopmentPath', remote(repo)],
    ['extensionTestsPath', remote(suiteIndex)],
  ];
  const url = `http://${authority}/?folder=${encodeURIComponent(workspace)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
  await page.goto(url, { waitUntil: 'domcontentloaded' });
  log('workbench loaded; waiting for the suite');

  const code = await exitCode;
  const s = sink.summary();
  if (!s) {
    return finish(code === 0 ? 2 : code, `0 passed, 0 failed\n[vscode-itest] the suite never printed its end marker (workbench exit code ${code}); rerun with KPROBE_VSCODE_VERBOSE=1`);
  }
  process.stdout.write(`[vscode-itest ${elapsed()}] done\n`);
  process.stdout.write(`${s.passed} passed, ${s.failed} failed\n`);
  return finish(s.failed > 0 ? 1 : code);
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(sig, () => finish(130, `interrupted by ${sig}`));
main().catch(e => finish(2, `harness error: ${e?.stack ?? e}\n0 passed, 1 failed`));
