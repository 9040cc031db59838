// Bundles the entry points with esbuild. `vscode` stays external: it is
// provided by the extension host at run time.
import { build } from 'esbuild';
import { chmodSync } from 'node:fs';

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
  ['adapter/main.ts', 'dist/adapter.js'],
  ['extension/languageServer/server.ts', 'dist/languageServer.js'],
  ['emulator/cli/main.ts', 'dist/cli.js'],
  // loaded on demand by the language server (extension/languageServer/decoderLoader.ts)
  ['emulator/arch/decoders.ts', 'dist/decoders.js'],
];

await Promise.all(entries.map(([entry, outfile]) =>
  build({ ...common, entryPoints: [entry], outfile,
    banner: outfile.endsWith('cli.js') ? { js: '#!/usr/bin/env node' } : undefined })));
chmodSync('dist/cli.js', 0o755);
