/**
 * The arguments of the DAP requests the adapter answers, checked against the
 * protocol's types before any handler runs: a missing or ill-typed argument
 * (`setBreakpoints` without `source`, a `threadId` that is a string) is
 * answered with an error naming the request and the argument, instead of the
 * handler failing on it with a JS stack. Only what the protocol requires is
 * checked; extra fields are ignored, and optional fields may be absent (or
 * null, which clients send for "absent").
 */

/** One argument: its JSON type, whether it may be absent, and for arrays the fields of their elements. */
type Kind = 'int' | 'string' | 'bool' | 'object';
interface Field { kind: Kind | 'array'; optional?: boolean; of?: Fields; ofKind?: Kind }
type Fields = Record<string, Field>;

const req = (kind: Kind): Field => ({ kind });
const opt = (kind: Kind): Field => ({ kind, optional: true });
const list = (of: Fields, optional = false): Field => ({ kind: 'array', of, optional });
const listOf = (ofKind: Kind, optional = false): Field => ({ kind: 'array', ofKind, optional });

const THREAD: Fields = { threadId: req('int') };
const STEP: Fields = { threadId: req('int'), granularity: opt('string') };
const CONDITIONS: Fields = { condition: opt('string'), hitCondition: opt('string') };

/** DAP request arguments by command (debugAdapterProtocol.json), for the requests this adapter answers. */
const REQUESTS: Record<string, Fields> = {
  initialize: { adapterID: opt('string'), clientID: opt('string'), pathFormat: opt('string'), linesStartAt1: opt('bool'), columnsStartAt1: opt('bool') },
  configurationDone: {},
  launch: { noDebug: opt('bool') },
  restart: { arguments: opt('object') },
  disconnect: { restart: opt('bool'), terminateDebuggee: opt('bool'), suspendDebuggee: opt('bool') },
  terminate: { restart: opt('bool') },
  continue: { threadId: req('int'), singleThread: opt('bool') },
  pause: THREAD,
  next: STEP,
  stepIn: { ...STEP, targetId: opt('int') },
  stepOut: STEP,
  stepBack: STEP,
  reverseContinue: THREAD,
  threads: {},
  stackTrace: { threadId: req('int'), startFrame: opt('int'), levels: opt('int'), format: opt('object') },
  scopes: { frameId: req('int') },
  variables: { variablesReference: req('int'), filter: opt('string'), start: opt('int'), count: opt('int'), format: opt('object') },
  setVariable: { variablesReference: req('int'), name: req('string'), value: req('string'), format: opt('object') },
  source: { source: opt('object'), sourceReference: req('int') },
  evaluate: { expression: req('string'), frameId: opt('int'), context: opt('string'), format: opt('object') },
  readMemory: { memoryReference: req('string'), offset: opt('int'), count: req('int') },
  writeMemory: { memoryReference: req('string'), offset: opt('int'), allowPartial: opt('bool'), data: req('string') },
  disassemble: {
    memoryReference: req('string'), offset: opt('int'), instructionOffset: opt('int'), instructionCount: req('int'), resolveSymbols: opt('bool'),
  },
  setBreakpoints: {
    source: req('object'),
    breakpoints: list({ line: req('int'), column: opt('int'), ...CONDITIONS, logMessage: opt('string'), mode: opt('string') }, true),
    lines: listOf('int', true),
    sourceModified: opt('bool'),
  },
  setFunctionBreakpoints: { breakpoints: list({ name: req('string'), ...CONDITIONS }) },
  setInstructionBreakpoints: { breakpoints: list({ instructionReference: req('string'), offset: opt('int'), ...CONDITIONS, mode: opt('string') }) },
  dataBreakpointInfo: { variablesReference: opt('int'), name: req('string'), frameId: opt('int'), bytes: opt('int'), asAddress: opt('bool'), mode: opt('string') },
  setDataBreakpoints: { breakpoints: list({ dataId: req('string'), accessType: opt('string'), ...CONDITIONS }) },
};

/** A value as it came, shortened: 0.5, "1", [...], {...}, null */
function shown(v: unknown): string {
  if (Array.isArray(v)) return '[...]';
  if (typeof v === 'object' && v !== null) return '{...}';
  const t = JSON.stringify(v) ?? String(v);
  return t.length > 40 ? `${t.slice(0, 40)}...` : t;
}

function fits(kind: Kind, v: unknown): boolean {
  switch (kind) {
    case 'int': return typeof v === 'number' && Number.isSafeInteger(v);
    case 'string': return typeof v === 'string';
    case 'bool': return typeof v === 'boolean';
    case 'object': return typeof v === 'object' && v !== null && !Array.isArray(v);
  }
}

const KIND_NAME: Record<Kind, string> = { int: 'an integer', string: 'a string', bool: 'a boolean', object: 'an object' };

function checkFields(fields: Fields, o: Record<string, unknown>, path: string): string | undefined {
  for (const [name, f] of Object.entries(fields)) {
    const v = o[name];
    const where = path ? `${path}.${name}` : name;
    if (v === undefined || v === null) {
      if (f.optional) continue;
      return `${where} is missing`;
    }
    if (f.kind !== 'array') {
      if (!fits(f.kind, v)) return `${where} ${shown(v)} is not ${KIND_NAME[f.kind]}`;
      continue;
    }
    if (!Array.isArray(v)) return `${where} ${shown(v)} is not an array`;
    for (let i = 0; i < v.length; i++) {
      const el = v[i];
      if (f.ofKind) {
        if (!fits(f.ofKind, el)) return `${where}[${i}] ${shown(el)} is not ${KIND_NAME[f.ofKind]}`;
        continue;
      }
      if (!fits('object', el)) return `${where}[${i}] ${shown(el)} is not an object`;
      const bad = checkFields(f.of ?? {}, el as Record<string, unknown>, `${where}[${i}]`);
      if (bad) return bad;
    }
  }
  return undefined;
}

/**
 * What is wrong with a request's arguments ("source is missing",
 * 'threadId "1" is not an integer'), or
 * undefined when they fit the protocol (or the command is not one of the
 * checked DAP requests: custom requests check their own).
 */
export function requestArgumentsProblem(command: string, args: unknown): string | undefined {
  const fields = Object.prototype.hasOwnProperty.call(REQUESTS, command) ? REQUESTS[command] : undefined;
  if (!fields) return undefined;
  if (args === undefined) args = {};
  if (!fits('object', args)) return `the arguments (${shown(args)}) are not an object`;
  return checkFields(fields, args as Record<string, unknown>, '');
}
