/** The adapter as a TCP DAP server: one KprobeSession per connection. */
import * as net from 'node:net';
import { serveFramed } from './framing';
import { KprobeSession } from './kprobeSession';

/** Listens on 127.0.0.1:port; resolves with the bound port (0 picks a free one). */
export function startServer(port: number): Promise<net.Server> {
  const server = net.createServer(socket => {
    socket.on('error', () => socket.destroy());
    const session = new KprobeSession();
    session.setRunAsServer(true);
    socket.on('close', () => session.stopMachine());
    serveFramed(session, socket, socket, line => process.stderr.write(line + '\n'));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}
