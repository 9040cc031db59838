/**
 * Shared pieces of the DebugClient tests: an in-process adapter server, the
 * `#BP name` marker lookup (never hard-coded line numbers), launching stopped
 * at the entry with breakpoints set in the configuration phase.
 */
import { readFileSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { DebugClient } from '@vscode/debugadapter-testsupport';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { startServer } from '../../adapter/server';
import { repoPath } from '../util/paths';

export const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
export const FORK_C = repoPath('examples', 'kernel', 'fork.c');

/** The sample kernel built for an architecture. */
export function kernelImage(arch: string): string {
  return repoPath('examples', 'kernel', 'build', `kernel-${arch}.elf`);
}

/** 1-based line of the "#BP name" marker comment in a sample kernel source. */
export function markerLine(file: string, name: string): number {
  const lines = readFileSync(file, 'utf8').split('\n');
  const i = lines.findIndex(l => l.includes(`/* #BP ${name} */`));
  if (i < 0) throw new Error(`marker #BP ${name} not found in ${file}`);
  return i + 1;
}

/** 1-based line of the first line of `file` containing `text`. */
export function lineOf(file: string, text: string): number {
  const i = readFileSync(file, 'utf8').split('\n').findIndex(l => l.includes(text));
  if (i < 0) throw new Error(`"${text}" not found in ${file}`);
  return i + 1;
}

/**
 * DebugClient has no timeouts when connected to a server port: a missed
 * event would hang the test. Every wait of the harness goes through this.
 */
export function within<T>(p: Promise<T>, what: string, ms = 20_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms); });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export class Harness {
  server!: Server;
  dc!: DebugClient;

  async startServer(): Promise<void> { this.server = await startServer(0); }
  stopServer(): Promise<void> { return new Promise<void>(r => this.server.close(() => r())); }

  async startClient(): Promise<DebugClient> {
    this.dc = new DebugClient('node', 'unused', 'kprobe');
    this.dc.defaultTimeout = 20_000;
    await this.dc.start((this.server.address() as AddressInfo).port);
    return this.dc;
  }

  /** Launch stopped at the entry with breakpoints set in the configuration phase; returns the initialize capabilities. */
  async launchWith(setup: () => Promise<void>, extra: Record<string, unknown> = {}): Promise<void> {
    const dc = this.dc;
    const entry = dc.waitForEvent('stopped');
    await within(Promise.all([
      dc.waitForEvent('initialized').then(setup).then(() => dc.configurationDoneRequest()),
      dc.launch({ program: KERNEL, cpus: 2, stopOnEntry: true, ...extra }),
    ]), 'launch and configuration');
    await within(entry, 'the entry stop');
  }

  /** continue, and wait for the next stop */
  async continueToStop(threadId = 1): Promise<DebugProtocol.StoppedEvent> {
    const ev = this.dc.waitForEvent('stopped');
    await within(this.dc.continueRequest({ threadId }), 'the continue response');
    return await within(ev, 'a stop after continue') as DebugProtocol.StoppedEvent;
  }

  /** a step request, and the stop it ends with */
  async stepAndWait(fn: () => Promise<unknown>): Promise<DebugProtocol.StoppedEvent> {
    const ev = this.dc.waitForEvent('stopped');
    await within(Promise.resolve(fn()), 'the step response');
    return await within(ev, 'the stop that ends the step') as DebugProtocol.StoppedEvent;
  }

  async topFrame(threadId: number): Promise<DebugProtocol.StackFrame> {
    return (await this.dc.stackTraceRequest({ threadId })).body.stackFrames[0];
  }

  async evaluate(expression: string, frameId?: number, context = 'watch'): Promise<DebugProtocol.EvaluateResponse['body']> {
    return (await this.dc.evaluateRequest({ expression, frameId, context })).body;
  }

  /** evaluate that must fail; returns the error message */
  async evaluateError(expression: string, frameId?: number): Promise<string> {
    try {
      await this.dc.evaluateRequest({ expression, frameId, context: 'repl' });
    } catch (e) {
      return e instanceof Error ? e.message : String(e);
    }
    throw new Error(`evaluate "${expression}" succeeded but should fail`);
  }
}
