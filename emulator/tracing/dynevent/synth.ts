/**
 * Synthetic events (Linux 6.1 kernel/trace/trace_events_synth.c): an event
 * of the `synthetic` group made of named, typed fields and nothing else,
 * defined by a line of tracefs `synthetic_events` (`NAME FIELD[; FIELD]...`,
 * `!NAME` removes it) or of `dynamic_events` (`s:[synthetic/]NAME FIELD[;
 * FIELD]...`). A FIELD is `[unsigned] TYPE NAME[[N]]` with TYPE one of
 * s8..s64, u8..u64, char, int, long, bool, pid_t, gfp_t, or `char[N]` /
 * `char[]` strings (synth_field_size). Errors are Linux's SYNTH_ERR_* with
 * the error_log position err_pos gives (where the offending word first
 * occurs in the command).
 *
 * Linux generates these events only from histogram triggers' onmatch/
 * onmax actions (not implemented here), so a synthetic event is defined,
 * listed, enabled and removed, but records nothing.
 */
import { IDENT } from '../events/argParse';
import { COMMON_FIELDS, COMMON_SIZE } from '../events/eventFormat';

/** SYNTH_FIELDS_MAX */
const SYNTH_FIELDS_MAX = 64;
/** STR_VAR_LEN_MAX: the longest fixed-size string field */
const STR_VAR_LEN_MAX = 256;
/** the group every synthetic event is in (SYNTH_SYSTEM) */
export const SYNTH_SYSTEM = 'synthetic';

/** Linux's synthetic-event error_log messages (trace_events_synth.c ERRORS) */
export const SYNTH_ERRORS = {
  BAD_NAME: 'Illegal name',
  INVALID_CMD: 'Command must be of the form: <name> field[;field] ...',
  INVALID_DYN_CMD: 'Command must be of the form: s or -:[synthetic/]<name> field[;field] ...',
  EVENT_EXISTS: 'Event already exists',
  TOO_MANY_FIELDS: 'Too many fields',
  INCOMPLETE_TYPE: 'Incomplete type',
  INVALID_TYPE: 'Invalid type',
  INVALID_FIELD: 'Invalid field',
  INVALID_ARRAY_SPEC: 'Invalid array specification',
} as const;
export type SynthErrorCode = keyof typeof SYNTH_ERRORS;

export interface SynthField {
  /** the type as Linux keeps it ("u64", "unsigned int", "char[16]", "__data_loc char[]") */
  type: string;
  name: string;
  /** bytes of the value (a dynamic string's: its 8-byte slot) */
  size: number;
  signed: boolean;
  string: boolean;
  dynamic: boolean;
}

export interface SynthEvent {
  name: string;
  fields: SynthField[];
}

/** A refused command: errno, Linux's code, and the 0-based position in `command` (the error_log's '^'). */
export interface SynthError { errno: 'EINVAL' | 'EEXIST' | 'ENOENT'; code: SynthErrorCode; pos: number; command: string }

export type SynthResult = { ok: true; event: SynthEvent } | { ok: false; error: SynthError };

/** synth_field_string_size: N of char[N] (0: char[], a dynamic string), or -1 */
function stringSize(type: string): number {
  const start = type.indexOf('char[');
  if (start < 0) return -1;
  const body = type.slice(start + 5);
  const end = body.indexOf(']');
  if (end < 0 || end !== body.length - 1) return -1;
  const digits = body.slice(0, end);
  if (digits.length > 3) return -1;
  if (!digits) return 0;
  if (!/^(0x[0-9a-f]+|0[0-7]*|[1-9][0-9]*)$/i.test(digits)) return -1;
  const n = Number(digits);
  return n > STR_VAR_LEN_MAX ? -1 : n;
}

const SIZES: Record<string, number> = {
  s64: 8, u64: 8, s32: 4, u32: 4, s16: 2, u16: 2, s8: 1, u8: 1, char: 1, 'unsigned char': 1, int: 4, 'unsigned int': 4,
  long: 8, 'unsigned long': 8, bool: 1, pid_t: 4, gfp_t: 4,
};

/** synth_field_size: bytes, 0 for a dynamic string, -1 for an unknown type */
function fieldSize(type: string): number {
  if (type in SIZES) return SIZES[type];
  return type.includes('char[') ? stringSize(type) : 0;
}

/** the kernel's argv_split: words between blanks */
const split = (s: string): string[] => s.split(/[ \t\n]+/).filter(Boolean);

class Refused extends Error {
  constructor(readonly code: SynthErrorCode, readonly pos: number, readonly errno: SynthError['errno'] = 'EINVAL') { super(code); }
}

/** err_pos: where `word` first occurs in the command (0 when it does not) */
function errPos(command: string, word: string): number {
  const i = command.indexOf(word);
  return i < 0 ? 0 : i;
}

/** parse_synth_field: one field from the words of a ';'-separated piece; how many words it took */
function parseField(words: string[], command: string): { field: SynthField; used: number } {
  let prefix = '';
  let type = words[0];
  let name: string | undefined;
  let used: number;
  if (type === 'unsigned') {
    if (words.length < 3) throw new Refused('INCOMPLETE_TYPE', errPos(command, type));
    prefix = 'unsigned ';
    type = words[1];
    name = words[2];
    used = 3;
  } else {
    name = words[1];
    used = 2;
  }
  if (name === undefined) throw new Refused('INVALID_FIELD', errPos(command, type));
  const bracket = name.indexOf('[');
  const array = bracket >= 0 ? name.slice(bracket) : '';
  const fieldName = bracket >= 0 ? name.slice(0, bracket) : name;
  if (!IDENT.test(fieldName)) throw new Refused('BAD_NAME', errPos(command, name));
  let full = prefix + type + array;
  let size = fieldSize(full);
  let dynamic = false;
  if (size < 0) throw new Refused(array ? 'INVALID_ARRAY_SPEC' : 'INVALID_TYPE', errPos(command, array ? name : type));
  if (size === 0) {
    if (!full.includes('char[')) throw new Refused('INVALID_TYPE', errPos(command, type));
    full = `__data_loc ${full}`;
    dynamic = true;
    size = 8;
  }
  const string = full.includes('char[');
  return { field: { type: full, name: fieldName, size, signed: !full.startsWith('u') && full !== 'gfp_t', string, dynamic }, used };
}

/**
 * __create_synth_event: NAME and the text of its fields, into an event (not
 * yet registered: `exists` says whether the name is taken).
 */
function create(name: string, fields: string, command: string, exists: (name: string) => boolean): SynthEvent {
  if (!name) throw new Refused('INVALID_CMD', 0);
  if (!IDENT.test(name)) throw new Refused('BAD_NAME', errPos(command, name));
  if (exists(name)) throw new Refused('EVENT_EXISTS', errPos(command, name), 'EEXIST');
  const out: SynthField[] = [];
  for (const piece of fields.split(';')) {
    const words = split(piece);
    let used = 0;
    while (used < words.length) {
      const f = parseField(words.slice(used), command);
      used += f.used;
      out.push(f.field);
      if (out.length === SYNTH_FIELDS_MAX) throw new Refused('TOO_MANY_FIELDS', 0);
    }
  }
  if (!out.length) throw new Refused('INVALID_CMD', 0);
  return { name, fields: out };
}

/** check_command: before the first ';' there must be a name, a type and a field name */
function checkCommand(text: string): boolean {
  const head = text.split(';')[0];
  return head.startsWith('!') || split(head).length >= 3;
}

function attempt(command: string, run: () => SynthEvent): SynthResult {
  try {
    return { ok: true, event: run() };
  } catch (e) {
    if (e instanceof Refused) return { ok: false, error: { errno: e.errno, code: e.code, pos: e.pos, command } };
    throw e;
  }
}

/**
 * A line of `synthetic_events` that defines an event (create_or_delete_synth_event;
 * `!NAME` lines are removals: synthRemoval).
 */
export function parseSynthLine(line: string, exists: (name: string) => boolean): SynthResult {
  const command = line.replace(/^[ \t\n]+/, '');
  return attempt(command, () => {
    if (!checkCommand(command)) throw new Refused('INVALID_CMD', 0);
    const m = /[ \t]/.exec(command);
    if (!m) throw new Refused('INVALID_CMD', 0);
    return create(command.slice(0, m.index), command.slice(m.index).replace(/^[ \t\n]+/, ''), command, exists);
  });
}

/** `!NAME ...` of synthetic_events: the name to remove, or undefined when the line is not a removal */
export function synthRemoval(line: string): string | undefined {
  const command = line.replace(/^[ \t\n]+/, '');
  if (!command.startsWith('!')) return undefined;
  return split(command)[0].slice(1);
}

/** `s:[synthetic/]NAME FIELDS` of dynamic_events (create_synth_event) */
export function parseSynthDynamic(line: string, exists: (name: string) => boolean): SynthResult {
  const command = line.replace(/^[ \t\n]+/, '');
  return attempt(command, () => {
    let name = command.slice(2);
    const m = /[ \t]/.exec(command);
    if (!m) throw new Refused('INVALID_CMD', 0);
    const nameEnd = m.index;
    let at = 2;
    if (name.slice(0, nameEnd - 2).includes('/')) {
      if (!name.startsWith(`${SYNTH_SYSTEM}/`)) throw new Refused('INVALID_DYN_CMD', 0);
      at += SYNTH_SYSTEM.length + 1;
    }
    if (!checkCommand(command.slice(at))) throw new Refused('INVALID_CMD', 0);
    name = command.slice(at, nameEnd);
    return create(name, command.slice(nameEnd).replace(/^[ \t\n]+/, ''), command, exists);
  });
}

/** The error_log entry of a refused command (subsystem "synthetic_events", '^' under err_pos). */
export function synthErrorLog(e: SynthError): string {
  const lead = '  Command: ';
  return `synthetic_events: error: ${SYNTH_ERRORS[e.code]}\n${lead}${e.command}\n${' '.repeat(lead.length + e.pos)}^\n`;
}

/** __synth_event_show: "NAME\tTYPE FIELD; TYPE FIELD" (a dynamic string's type without its __data_loc) */
export function synthFieldsText(e: SynthEvent): string {
  return `${e.name}\t${e.fields.map(f => `${f.type.replace(/^__data_loc /, '')} ${f.name}`).join('; ')}`;
}

/** synth_field_fmt */
function fieldFmt(type: string): string {
  const fmts: Record<string, string> = {
    s64: '%lld', u64: '%llu', s32: '%d', u32: '%u', s16: '%d', u16: '%u', s8: '%d', u8: '%u', char: '%d', 'unsigned char': '%u',
    int: '%d', 'unsigned int': '%u', long: '%ld', 'unsigned long': '%lu', bool: '%d', pid_t: '%d', gfp_t: '%x',
  };
  return type.includes('char[') ? '%.*s' : fmts[type] ?? '%llu';
}

/** events/synthetic/NAME/format: the common fields, one u64 slot per field (a fixed string: its STR_VAR_LEN_MAX bytes), the print fmt */
export function synthFormat(e: SynthEvent, id: number): string {
  const lines = [`name: ${e.name}`, `ID: ${id}`, 'format:', ...COMMON_FIELDS, ''];
  let offset = COMMON_SIZE;
  for (const f of e.fields) {
    lines.push(`\tfield:${f.type} ${f.name};\toffset:${offset};\tsize:${f.size};\tsigned:${f.signed ? 1 : 0};`);
    offset += f.string && !f.dynamic ? STR_VAR_LEN_MAX : 8;
  }
  const fmt = e.fields.map(f => `${f.name}=${fieldFmt(f.type.replace(/^__data_loc /, ''))}`).join(', ');
  const values = e.fields.map(f => (f.dynamic ? `, __get_str(${f.name})` : `, REC->${f.name}`)).join('');
  lines.push('', `print fmt: "${fmt}"${values}`, '');
  return lines.join('\n');
}
