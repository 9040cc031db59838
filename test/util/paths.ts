import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The repository root: the nearest ancestor of this file or the cwd holding kprobe-debug's package.json. */
export function repoRoot(): string {
  for (const start of [__dirname, process.cwd()]) {
    let d = resolve(start);
    for (;;) {
      const pj = join(d, 'package.json');
      if (existsSync(pj) && JSON.parse(readFileSync(pj, 'utf8')).name === 'kprobe-debug') return d;
      const up = dirname(d);
      if (up === d) break;
      d = up;
    }
  }
  throw new Error('cannot find the kprobe-debug repository root');
}

export function repoPath(...parts: string[]): string {
  return join(repoRoot(), ...parts);
}
