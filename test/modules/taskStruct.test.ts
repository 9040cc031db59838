/**
 * struct task_struct as a module sees it (examples/include/linux/sched.h,
 * emulator/kernel/task.ts TASK_STRUCT): `current` and kretprobe_instance.task
 * point at a task_struct the kernel writes when it hands the address out,
 * with Linux's meaning of its fields: a kernel thread has mm == NULL
 * (active_mm NULL too: no lazy mm here) and PF_KTHREAD in flags; a user
 * process has its mm; pid, tgid and comm (NUL-terminated, at most 15
 * characters) are the task's.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Memory } from '../../emulator/memory/memory';
import { mustVAddr } from '../../emulator/memory/address';
import { PF_KTHREAD, TASK_STRUCT, mmAddress, publishTaskStruct, taskAddress } from '../../emulator/kernel/task';
import type { Task } from '../../emulator/kernel/types';

function task(pid: number, comm: string, user: boolean): Task {
  const mem = new Memory('test');
  return { pid, comm, cpu: 0, state: 'runnable', user, mm: mem, stackBase: 0n, stackTop: 0n };
}

function read(mem: Memory, a: bigint): { flags: number; pid: number; tgid: number; mm: bigint; activeMm: bigint; comm: string } {
  const b = mem.readBytes(mustVAddr(a), TASK_STRUCT.size);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const comm = b.subarray(TASK_STRUCT.comm, TASK_STRUCT.comm + 16);
  return {
    flags: dv.getUint32(TASK_STRUCT.flags, true), pid: dv.getInt32(TASK_STRUCT.pid, true), tgid: dv.getInt32(TASK_STRUCT.tgid, true),
    mm: dv.getBigUint64(TASK_STRUCT.mm, true), activeMm: dv.getBigUint64(TASK_STRUCT.active_mm, true),
    comm: new TextDecoder().decode(comm.subarray(0, comm.indexOf(0))),
  };
}

describe('struct task_struct for modules (current->mm & co.)', () => {
  test('a kernel thread: mm and active_mm NULL, PF_KTHREAD; a user process: its mm, no PF_KTHREAD; pid, tgid, comm', () => {
    const mem = new Memory('kernel');
    const kthread = task(7, 'kworker/0:1', false);
    const a = publishTaskStruct(mem, kthread);
    assert.equal(a, taskAddress(kthread));
    assert.deepEqual(read(mem, a), { flags: PF_KTHREAD, pid: 7, tgid: 7, mm: 0n, activeMm: 0n, comm: 'kworker/0:1' });
    const proc = task(42, 'a-very-long-program-name', true);
    const p = publishTaskStruct(mem, proc);
    const seen = read(mem, p);
    assert.notEqual(seen.mm, 0n);
    assert.deepEqual(seen, { flags: 0, pid: 42, tgid: 42, mm: mmAddress(proc), activeMm: mmAddress(proc), comm: 'a-very-long-pro' });
    assert.equal(publishTaskStruct(mem, undefined), 0n, 'no task (an idle CPU): NULL');
  });

  test('written again when handed out again: a field that changed (comm after execve) is current', () => {
    const mem = new Memory('kernel');
    const t = task(9, 'sh', true);
    publishTaskStruct(mem, t);
    t.comm = 'cat';
    assert.equal(read(mem, publishTaskStruct(mem, t)).comm, 'cat');
  });
});
