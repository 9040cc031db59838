/**
 * Booting Linux on the full-system PC as a session: the console watched for
 * the shell prompt (then the scripted input typed, one line per prompt),
 * for a kernel panic (its text kept), and for the milestones a boot passes;
 * what the CLI's `boot`, the tests and the bench share.
 *
 * Input is deterministic: line k is typed when the console shows the
 * shell prompt for the k-th time (the output then ends with PROMPT); after
 * the last line's prompt the session ends ('done').
 */
import { PcRun, type PcRunOptions, type PcRunStop } from './pcRun';

/** busybox sh's prompt as root in / (the initramfs's /init starts it there) */
export const PROMPT = '/ # ';
/** what a boot passes, in order: the first console line containing each */
export const MILESTONES = ['Linux version', 'Calibrating delay loop', 'Freeing unused kernel image', 'Run /init as init process', PROMPT] as const;

export interface BootSessionOptions extends PcRunOptions {
  readonly maxInstructions: number;
  /** lines typed at the prompt, each ending in '\n' (added if missing) */
  readonly input?: readonly string[];
  readonly onConsole?: (text: string) => void;
  readonly onLog?: (line: string) => void;
  /** stop at the first prompt even with no input */
  readonly stopAtPrompt?: boolean;
}

export interface BootSessionResult {
  readonly stop: PcRunStop;
  readonly console: string;
  readonly instructions: number;
  /** virtual ns at the end */
  readonly virtualNs: bigint;
  /** milestone -> instructions retired when it first appeared */
  readonly milestones: ReadonlyMap<string, number>;
  /** the panic line and what follows it, when the guest panicked */
  readonly panic: string | null;
  readonly log: readonly string[];
}

const PANIC = 'Kernel panic - not syncing';
/** busybox's line editor asks the terminal where the cursor is (ESC [ 6 n) right after the prompt; nobody answers, it goes on */
const CURSOR_QUERY = '\x1b[6n';
export const atPrompt = (con: string): boolean => con.endsWith(PROMPT) || con.endsWith(PROMPT + CURSOR_QUERY);

export function bootSession(o: BootSessionOptions): BootSessionResult {
  const run = new PcRun(o);
  const m = run.machine;
  const input = (o.input ?? []).map(l => (l.endsWith('\n') ? l : `${l}\n`));
  let con = '';
  let prompts = 0;
  let fed = 0;
  const milestones = new Map<string, number>();
  const log: string[] = [];
  const decoder = new TextDecoder('latin1');
  m.onConsole(b => {
    const ch = decoder.decode(new Uint8Array([b]));
    con += ch;
    o.onConsole?.(ch);
  });
  m.onLog(l => { log.push(l); o.onLog?.(l); });
  let scanned = 0;
  const until = (): PcRunStop | null => {
    if (con.length === scanned) return null;
    for (const ms of MILESTONES) {
      if (!milestones.has(ms) && con.indexOf(ms, Math.max(0, scanned - ms.length)) >= 0) milestones.set(ms, run.instructions);
    }
    scanned = con.length;
    if (atPrompt(con)) {
      prompts++;
      if (fed < input.length && prompts === fed + 1) {
        m.consoleInput(new TextEncoder().encode(input[fed++]));
        return null;
      }
      if (fed === input.length && (o.stopAtPrompt || input.length > 0)) return { kind: 'done', detail: prompts === 1 ? 'the shell prompt' : `the prompt after ${input.length} input line${input.length > 1 ? 's' : ''}` };
    }
    return null;
  };
  const stop = run.run(o.maxInstructions, until);
  const p = con.indexOf(PANIC);
  return {
    stop, console: con, instructions: run.instructions, virtualNs: m.clock.nowNs(), milestones,
    panic: p >= 0 ? con.slice(p).split('\n').slice(0, 1)[0].trim() : null, log,
  };
}
