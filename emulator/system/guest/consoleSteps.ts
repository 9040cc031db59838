/**
 * A booted guest driven one shell command at a time, with the machine
 * paused between them: the boot runs to busybox's prompt, step k's command
 * is typed, and when the prompt shows again the step's `then` gets what
 * the command printed (its echo and the prompt cut off) while the machine
 * stands still between the run loop's slices, so a reader of guest memory
 * sees the state the command left. Deterministic as the machine is: the
 * same kernel, initrd, command line and steps give the same bytes.
 */
import { PcRun, type PcRunOptions, type PcRunStop } from '../pcRun';
import { atPrompt, PROMPT } from '../pcBoot';

export interface ConsoleStep {
  readonly input: string;
  /** called with the command's output while the machine is paused at the next prompt */
  readonly then?: (output: string, run: PcRun) => void;
}

export interface ConsoleStepsOptions extends PcRunOptions {
  readonly maxInstructions: number;
  readonly steps: readonly ConsoleStep[];
  readonly onConsole?: (text: string) => void;
  /** called at the first prompt (the boot done), before the first step is typed */
  readonly atBoot?: (run: PcRun) => void;
}

export interface ConsoleStepsResult {
  readonly stop: PcRunStop;
  readonly console: string;
  readonly instructions: number;
  /** steps whose `then` ran */
  readonly done: number;
}

const CURSOR_QUERY = '\x1b[6n';

export function runConsoleSteps(o: ConsoleStepsOptions): ConsoleStepsResult {
  const run = new PcRun(o);
  const m = run.machine;
  let con = '';
  const decoder = new TextDecoder('latin1');
  m.onConsole(b => {
    const ch = decoder.decode(new Uint8Array([b]));
    con += ch;
    o.onConsole?.(ch);
  });
  let typed = -1; // the step whose command is running
  let from = 0; // console offset where its output begins
  let done = 0;
  let scanned = 0;
  const type = (k: number): void => {
    typed = k;
    from = con.length;
    const line = o.steps[k].input;
    m.consoleInput(new TextEncoder().encode(line.endsWith('\n') ? line : `${line}\n`));
  };
  const until = (): PcRunStop | null => {
    if (con.length === scanned) return null;
    scanned = con.length;
    if (!atPrompt(con)) return null;
    if (typed < 0) {
      o.atBoot?.(run);
    } else {
      let out = con.slice(from, con.length - (con.endsWith(CURSOR_QUERY) ? PROMPT.length + CURSOR_QUERY.length : PROMPT.length));
      // the terminal's echo of the command (wrapped at the console's width) ends at the first newline after its last character
      const input = o.steps[typed].input;
      let i = 0;
      for (let j = 0; i < out.length && j < input.length; i++) if (out[i] === input[j]) j++;
      const nl = out.indexOf('\n', i);
      out = nl >= 0 ? out.slice(nl + 1) : '';
      o.steps[typed].then?.(out.replace(/\r\n/g, '\n'), run);
      done++;
    }
    if (typed + 1 < o.steps.length) { type(typed + 1); return null; }
    return { kind: 'done', detail: `the prompt after ${o.steps.length} steps` };
  };
  const stop = run.run(o.maxInstructions, until);
  return { stop, console: con, instructions: run.instructions, done };
}
