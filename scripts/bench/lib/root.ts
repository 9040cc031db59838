import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/** The repository the bench runs from: the first folder up from the bundle holding examples/kernel/build. */
export function repoRoot(section: string): string {
  for (let d = resolve(__dirname); ; d = dirname(d)) {
    if (existsSync(join(d, 'examples', 'kernel', 'build'))) return d;
    if (dirname(d) === d) throw new Error(`bench/${section}: cannot find the repository (examples/kernel/build)`);
  }
}
