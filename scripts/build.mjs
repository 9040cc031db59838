// Bundles the entry points with esbuild. `vscode` stays external: it is
// provided by the extension host at run time.
//
// The CLI and the debug adapter are started as a fresh node process for every
// use, so they start through a code cache: dist/cli.js and dist/adapter.js
// are tiny bootstraps (scripts/bootstrap/codeCache.ts) that load the real
// bundles, dist/bundle/{cli,adapter}.js, with a V8 code cache.
import { build } from 'esbuild';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  external: ['vscode'],
  logLevel: 'warning',
};

const entries = [
  ['extension/extension.ts', 'dist/extension.js'],
  ['extension/languageServer/server.ts', 'dist/languageServer.js'],
  // loaded on demand by the language server (extension/languageServer/decoderLoader.ts)
  ['emulator/arch/decoders.ts', 'dist/decoders.js'],
];

/** [entry, bootstrap, real bundle, extra loader options] */
const cached = [
  ['emulator/cli/main.ts', 'dist/cli.js', 'dist/bundle/cli.js', {}],
  // a session may end with a hard kill (VS Code on Windows): write a missing cache after 20 s too
  ['adapter/main.ts', 'dist/adapter.js', 'dist/bundle/adapter.js', { flushAfterMs: 20_000 }],
];

/**
 * esbuild escapes every non-ASCII character of strings, identifiers and
 * regular expressions (charset ascii), but keeps the few that comments hold.
 * Those are replaced by one ASCII character per UTF-16 unit, so that every
 * column (and the source map) stays where it was: the bundle is then pure
 * ASCII, read as latin1, a one-byte string for V8 (faster to read, scan and
 * hash than the two-byte string one non-ASCII character makes of it).
 */
function asciify(bundle) {
  const text = readFileSync(bundle, 'utf8');
  if (!/[^\x00-\x7f]/.test(text)) return;
  const out = text.replace(/[^\x00-\x7f]/g, c => ({ '\u2014': '-', '\u2013': '-', '\u2192': '>', '\u2190': '<', '\u2018': "'", '\u2019': "'", '\u201c': '"', '\u201d': '"' })[c] ?? '?');
  writeFileSync(bundle, out);
}

async function bootstrap([, out, bundle, extra]) {
  asciify(bundle);
  const name = bundle.replace(/^.*\//, '').replace(/\.js$/, '');
  const rel = relative(dirname(out), bundle).split('\\').join('/');
  const spec = `{ file: require('node:path').join(__dirname, ${JSON.stringify(rel)}), name: ${JSON.stringify(name)}${
    Object.entries(extra).map(([k, v]) => `, ${k}: ${JSON.stringify(v)}`).join('')} }`;
  await build({
    ...common,
    sourcemap: false,
    stdin: {
      contents: `// ${out}: loads ${bundle} through a V8 code cache (scripts/bootstrap/codeCache.ts)\n`
        + `require('./scripts/bootstrap/codeCache').loadBundle(module, require, ${spec});\n`,
      resolveDir: root,
      sourcefile: `${out}-bootstrap.js`,
      loader: 'js',
    },
    outfile: out,
    banner: out.endsWith('cli.js') ? { js: '#!/usr/bin/env node' } : undefined,
  });
  // the maps of the bundles the entry points were before the split
  rmSync(`${out}.map`, { force: true });
}

await Promise.all([
  ...entries.map(([entry, outfile]) => build({ ...common, entryPoints: [entry], outfile })),
  ...cached.map(async (c) => {
    await build({ ...common, entryPoints: [c[0]], outfile: c[2] });
    await bootstrap(c);
  }),
]);
chmodSync('dist/cli.js', 0o755);
