/**
 * Every error the adapter answers with, named once (vscode-js-debug's
 * dap/errors.ts idea): its DAP message id, the text's prefix and whether the
 * client shows it to the user as a notification (only for actions the user
 * started and must know failed: launch, restart, a register or memory
 * write, a probe action from a view).
 */
import type { DebugProtocol } from '@vscode/debugprotocol';

interface ErrorKind {
  readonly id: number;
  /** text before the detail: 'readMemory: ' */
  readonly prefix: string;
  readonly showUser: boolean;
  /** the whole text when there is no detail */
  readonly text?: string;
}

export const DAP_ERRORS = {
  launchFailed: { id: 1001, prefix: '', showUser: true },
  notLaunched: { id: 1002, prefix: '', showUser: false, text: 'not launched' },
  noSuchThread: { id: 1003, prefix: '', showUser: false },
  stackTrace: { id: 1004, prefix: '', showUser: false },
  variables: { id: 1005, prefix: '', showUser: false },
  setVariable: { id: 1007, prefix: '', showUser: true },
  readMemory: { id: 1008, prefix: 'readMemory: ', showUser: false },
  writeMemory: { id: 1009, prefix: 'writeMemory: ', showUser: true },
  disassemble: { id: 1010, prefix: 'disassemble: ', showUser: false },
  evaluateNoRegister: { id: 1011, prefix: '', showUser: false },
  evaluate: { id: 1012, prefix: '', showUser: false },
  probeRequest: { id: 1013, prefix: '', showUser: true },
  nothingToRestart: { id: 1014, prefix: '', showUser: false, text: 'nothing to restart (not launched)' },
  running: { id: 1015, prefix: '', showUser: false, text: 'the machine is running; pause it before stepping' },
  restartFailed: { id: 1001, prefix: 'restart: ', showUser: true },
  breakpoints: { id: 1016, prefix: 'breakpoints: ', showUser: true },
  timeTravel: { id: 1017, prefix: '', showUser: true },
  /** a request whose arguments do not fit the protocol (a missing source, a threadId that is not an integer) */
  badArguments: { id: 1018, prefix: '', showUser: false },
  /** a request whose handler failed unexpectedly: its text, never a JS stack */
  requestFailed: { id: 1019, prefix: '', showUser: false },
} as const satisfies Record<string, ErrorKind>;

export type DapErrorName = keyof typeof DAP_ERRORS;

/** The text of a thrown value. */
export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The DAP message of an error: "kprobe: <prefix><detail>". */
export function dapError(name: DapErrorName, detail?: unknown, showUser?: boolean): DebugProtocol.Message {
  const k: ErrorKind = DAP_ERRORS[name];
  const text = detail === undefined ? k.text ?? name : `${k.prefix}${typeof detail === 'string' ? detail : errorText(detail)}`;
  return { id: k.id, format: `kprobe: ${text}`, showUser: showUser ?? k.showUser };
}
