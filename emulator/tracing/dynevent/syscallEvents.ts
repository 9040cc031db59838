/**
 * The system-call trace events (Linux 6.1 kernel/trace/trace_syscalls.c,
 * CONFIG_FTRACE_SYSCALLS): `syscalls/sys_enter_NAME` with the call's
 * arguments as fields named as its SYSCALL_DEFINE names them, and
 * `syscalls/sys_exit_NAME` with its return value, for the calls of the
 * table below the arch's syscall table has (so aarch64 and riscv64 have no
 * sys_enter_open, as on Linux). Each event's `format` is Linux's: the
 * common fields, `int __syscall_nr`, then one 8-byte slot per argument;
 * a trace line is "sys_NAME(ARG: HEX, ...)" / "sys_NAME -> 0xRET"
 * (print_syscall_enter / print_syscall_exit).
 *
 * Event probes (eprobe.ts) attach to these; their `$FIELD` is an argument.
 */
import { COMMON_FIELDS } from '../events/eventFormat';

/** one argument of a call: its type as the format file shows it, its name */
type Arg = readonly [type: string, name: string];

const STR = 'const char *';
/** SYSCALL_DEFINE signatures of the calls the emulated kernel implements that are traced */
const SIGNATURES: Readonly<Record<string, readonly Arg[]>> = {
  read: [['unsigned int', 'fd'], ['char *', 'buf'], ['size_t', 'count']],
  write: [['unsigned int', 'fd'], [STR, 'buf'], ['size_t', 'count']],
  open: [[STR, 'filename'], ['int', 'flags'], ['umode_t', 'mode']],
  openat: [['int', 'dfd'], [STR, 'filename'], ['int', 'flags'], ['umode_t', 'mode']],
  close: [['unsigned int', 'fd']],
  chdir: [[STR, 'filename']],
  fchdir: [['unsigned int', 'fd']],
  mkdir: [[STR, 'pathname'], ['umode_t', 'mode']],
  mkdirat: [['int', 'dfd'], [STR, 'pathname'], ['umode_t', 'mode']],
  rmdir: [[STR, 'pathname']],
  unlink: [[STR, 'pathname']],
  unlinkat: [['int', 'dfd'], [STR, 'pathname'], ['int', 'flag']],
  access: [[STR, 'filename'], ['int', 'mode']],
  faccessat: [['int', 'dfd'], [STR, 'filename'], ['int', 'mode']],
  newfstatat: [['int', 'dfd'], [STR, 'filename'], ['struct stat *', 'statbuf'], ['int', 'flag']],
  lseek: [['unsigned int', 'fd'], ['off_t', 'offset'], ['unsigned int', 'whence']],
  ioctl: [['unsigned int', 'fd'], ['unsigned int', 'cmd'], ['unsigned long', 'arg']],
  dup: [['unsigned int', 'fildes']],
  dup2: [['unsigned int', 'oldfd'], ['unsigned int', 'newfd']],
  dup3: [['unsigned int', 'oldfd'], ['unsigned int', 'newfd'], ['int', 'flags']],
  getdents64: [['unsigned int', 'fd'], ['struct linux_dirent64 *', 'dirent'], ['unsigned int', 'count']],
  execve: [[STR, 'filename'], ['const char *const *', 'argv'], ['const char *const *', 'envp']],
  exit_group: [['int', 'error_code']],
  getpid: [],
  kill: [['pid_t', 'pid'], ['int', 'sig']],
  wait4: [['pid_t', 'upid'], ['int *', 'stat_addr'], ['int', 'options'], ['struct rusage *', 'ru']],
  init_module: [['void *', 'umod'], ['unsigned long', 'len'], [STR, 'uargs']],
  finit_module: [['int', 'fd'], [STR, 'uargs'], ['int', 'flags']],
  delete_module: [[STR, 'name_user'], ['unsigned int', 'flags']],
};

export interface SyscallEvent {
  /** the call's name (its sys_enter_NAME / sys_exit_NAME) */
  call: string;
  nr: number;
  dir: 'enter' | 'exit';
  args: readonly Arg[];
}

/** the first id of these events (Linux numbers static events before the dynamic ones) */
const FIRST_ID = 1000;

/** The syscall events of an arch's syscall table (number -> name), in number order: key "syscalls/sys_enter_NAME". */
export function syscallEvents(table: Readonly<Record<number, string>>): Map<string, SyscallEvent & { id: number }> {
  const out = new Map<string, SyscallEvent & { id: number }>();
  let id = FIRST_ID;
  const calls = Object.entries(table).map(([nr, call]) => ({ nr: Number(nr), call })).sort((a, b) => a.nr - b.nr);
  for (const { nr, call } of calls) {
    const args = SIGNATURES[call];
    if (!args || out.has(`syscalls/sys_enter_${call}`)) continue;
    out.set(`syscalls/sys_enter_${call}`, { call, nr, dir: 'enter', args, id: id++ });
    out.set(`syscalls/sys_exit_${call}`, { call, nr, dir: 'exit', args: [], id: id++ });
  }
  return out;
}


/** events/syscalls/sys_{enter,exit}_NAME/format */
export function syscallFormat(e: SyscallEvent, id: number): string {
  const lines = [`name: sys_${e.dir}_${e.call}`, `ID: ${id}`, 'format:', ...COMMON_FIELDS, '', '\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;'];
  if (e.dir === 'exit') {
    lines.push('\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;', '', 'print fmt: "0x%lx", REC->ret', '');
    return lines.join('\n');
  }
  e.args.forEach(([type, name], i) => lines.push(`\tfield:${type} ${name};\toffset:${16 + 8 * i};\tsize:8;\tsigned:0;`));
  const fmt = e.args.map(([, name]) => `${name}: 0x%08lx`).join(', ');
  const values = e.args.map(([, name]) => `, ((unsigned long)(REC->${name}))`).join('');
  lines.push('', `print fmt: "${fmt}"${values}`, '');
  return lines.join('\n');
}

/** the text after the context of a sys_enter line: "sys_NAME(ARG: HEX, ...)" (print_syscall_enter) */
export function syscallEnterText(e: SyscallEvent, args: readonly bigint[]): string {
  return `sys_${e.call}(${e.args.map(([, name], i) => `${name}: ${BigInt.asUintN(64, args[i] ?? 0n).toString(16)}`).join(', ')})`;
}

/** the text of a sys_exit line: "sys_NAME -> 0xRET" (print_syscall_exit) */
export function syscallExitText(e: SyscallEvent, ret: bigint): string {
  return `sys_${e.call} -> 0x${BigInt.asUintN(64, ret).toString(16)}`;
}

/** the names of a call's fields an event probe may read ($FIELD): its arguments, and __syscall_nr */
export function syscallFieldNames(e: SyscallEvent): string[] {
  return ['__syscall_nr', ...(e.dir === 'exit' ? ['ret'] : e.args.map(([, name]) => name))];
}
