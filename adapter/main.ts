/**
 * Entry point of the kprobe debug adapter (dist/adapter.js).
 *   node dist/adapter.js               DAP over stdin/stdout (what VS Code spawns)
 *   node dist/adapter.js --server=4711 DAP server on 127.0.0.1:4711, one session per
 *                                      connection (set "kprobe.debugServer": 4711 to
 *                                      debug the adapter itself)
 */
import { KprobeSession } from './kprobeSession';
import { serveFramed } from './framing';
import { startServer } from './server';

function serverPort(argv: readonly string[]): number | undefined {
  for (const a of argv) {
    const m = /^--server=(\d+)$/.exec(a);
    if (m) {
      const port = Number(m[1]);
      if (port < 0 || port > 65535) throw new Error(`--server=${m[1]}: not a TCP port`);
      return port;
    }
    if (a.startsWith('--server')) throw new Error(`bad option ${a}: use --server=PORT`);
  }
  return undefined;
}

function main(): void {
  let port: number | undefined;
  try {
    port = serverPort(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`kprobe adapter: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(2);
  }
  if (port === undefined) {
    const session = new KprobeSession();
    process.on('SIGTERM', () => { session.stopMachine(); process.exit(0); });
    serveFramed(session, process.stdin, process.stdout, line => process.stderr.write(line + '\n'));
    return;
  }
  startServer(port).then(s => {
    const a = s.address();
    process.stderr.write(`kprobe adapter listening on 127.0.0.1:${typeof a === 'object' && a ? a.port : port}\n`);
  }, e => {
    process.stderr.write(`kprobe adapter: cannot listen on 127.0.0.1:${port}: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  });
}

main();
