/**
 * C expressions over the program's DWARF in the debugger (written as in gdb):
 * members (`->`, `.`), indexing, `&`, `*`, `sizeof`, casts to the program's
 * struct types, enums by name, globals; watch-style evaluateName on
 * variables; setVariable on a register-located argument and on a struct
 * member in memory; evaluation in a caller frame with its own names.
 * Stopped at vfs_read (fs.c: `ssize_t vfs_read(struct file *file, char
 * *buf, size_t count, loff_t *pos)`, called from main.c with fget(fd)).
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { Harness } from './dapHarness';

const h = new Harness();

async function scopeVars(frameId: number, name: string): Promise<DebugProtocol.Variable[]> {
  const scopes = (await h.dc.scopesRequest({ frameId })).body.scopes;
  const s = scopes.find(x => x.name === name);
  assert.ok(s, `scope ${name} in [${scopes.map(x => x.name).join(', ')}]`);
  return (await h.dc.variablesRequest({ variablesReference: s.variablesReference })).body.variables;
}

async function stopInVfsRead(): Promise<{ threadId: number; frame: DebugProtocol.StackFrame }> {
  await h.launchWith(async () => {
    const bp = (await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'vfs_read' }] })).body.breakpoints[0];
    assert.ok(bp.verified, bp.message);
  });
  const ev = await h.continueToStop();
  return { threadId: ev.body.threadId!, frame: await h.topFrame(ev.body.threadId!) };
}

const num = (s: string): bigint => BigInt(s.split(' ')[0]);

describe('C expressions over DWARF names and types (written as in gdb)', () => {
  before(() => h.startServer());
  after(() => h.stopServer());
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('members, indexing, &, *, sizeof and casts to the program\'s types agree with each other and with memory', async () => {
    const { frame } = await stopInVfsRead();
    const id = frame.id;
    const name = await h.evaluate('file->name', id, 'watch');
    assert.equal(name.type, 'const char *');
    assert.match(name.result, /^0x[0-9a-f]+ "[^"]*"$/);
    assert.equal((await h.evaluate('(*file).name', id)).result, name.result);
    // a char as gdb prints it: the first character of the name
    const first = /"(.)/.exec(name.result)![1];
    assert.equal((await h.evaluate('*file->name', id)).result, `${first.charCodeAt(0)} '${first}'`);
    assert.equal((await h.evaluate('file->name[0]', id)).type, 'const char');
    // the struct's layout from DWARF: sizeof and member addresses
    assert.equal(num((await h.evaluate('sizeof(struct file)', id)).result), 32n);
    assert.equal(num((await h.evaluate('sizeof(*file)', id)).result), 32n);
    const fdAddr = num((await h.evaluate('&file->fd', id)).result);
    assert.equal(fdAddr - num((await h.evaluate('(unsigned long)file', id)).result), 24n, 'fd is at offset 24');
    assert.equal((await h.evaluate('&file->fd', id)).type, 'int *');
    // the argument register holds the same pointer: a cast to the program's struct type reads the same member
    assert.equal((await h.evaluate('((struct file *)regs->di)->fd', id)).result, (await h.evaluate('file->fd', id)).result);
    // a global array of structs, indexed; the pointer is one of its elements
    const fd = num((await h.evaluate('file->fd', id)).result);
    assert.equal(num((await h.evaluate(`file_table[${fd}].fd`, id)).result), fd);
    assert.equal(num((await h.evaluate(`&file_table[${fd}] == file`, id)).result), 1n);
    // a whole struct: gdb's text, expandable into its members
    const whole = await h.evaluate('*file', id, 'watch');
    assert.equal(whole.type, 'struct file');
    assert.match(whole.result, /^\{name = 0x[0-9a-f]+ "[^"]*", data = 0x[0-9a-f]+ ".*", size = \d+, fd = \d+, mode = \d+\}$/s);
    assert.ok(whole.variablesReference > 0);
    const members = (await h.dc.variablesRequest({ variablesReference: whole.variablesReference })).body.variables;
    assert.deepEqual(members.map(m => m.evaluateName), ['(*file).name', '(*file).data', '(*file).size', '(*file).fd', '(*file).mode']);
    // errors say what is wrong
    assert.match(await h.evaluateError('file.fd', id), /'\.fd' needs a struct or union, not 'struct file \*'; it is a pointer: use '->fd'/);
    assert.match(await h.evaluateError('file->nosuch', id), /struct file has no member 'nosuch' \(members: name, data, size, fd, mode\)/);
    assert.match(await h.evaluateError('(struct nosuch *)0', id), /unknown type 'struct nosuch'/);
  });

  test('setVariable: a register-located argument and a member of a struct in memory; watch names of members', async () => {
    const { frame } = await stopInVfsRead();
    const args = await scopeVars(frame.id, 'Arguments');
    const count = args.find(v => v.name === 'count');
    assert.ok(count);
    assert.equal(count.evaluateName, 'count');
    const argsRef = (await h.dc.scopesRequest({ frameId: frame.id })).body.scopes.find(s => s.name === 'Arguments')!.variablesReference;
    const set = await h.dc.setVariableRequest({ variablesReference: argsRef, name: 'count', value: '5' });
    assert.equal(set.body.value, '5');
    assert.equal(num((await h.evaluate('count', frame.id)).result), 5n);
    assert.equal(num((await h.evaluate('regs->dx', frame.id)).result), 5n, 'count lives in rdx at the entry (x86_64 ABI)');
    // a member, through the pointer's expansion
    const file = args.find(v => v.name === 'file')!;
    const members = (await h.dc.variablesRequest({ variablesReference: file.variablesReference })).body.variables;
    const mode = members.find(m => m.name === 'mode')!;
    assert.equal(mode.evaluateName, 'file->mode');
    const r = await h.dc.setVariableRequest({ variablesReference: file.variablesReference, name: 'mode', value: '0x1ff' });
    assert.equal(r.body.value, '511');
    assert.equal(num((await h.evaluate('file->mode', frame.id)).result), 511n);
    // a bad value: the error, the variable unchanged
    await assert.rejects(h.dc.setVariableRequest({ variablesReference: file.variablesReference, name: 'mode', value: 'nosuch + 1' }), /'nosuch' is not declared/);
    assert.equal(num((await h.evaluate('file->mode', frame.id)).result), 511n);
  });

  test('in the caller frame its own names: main\'s locals, evaluated with the registers the CFI recovers', async () => {
    const { threadId } = await stopInVfsRead();
    const frames = (await h.dc.stackTraceRequest({ threadId })).body.stackFrames;
    assert.ok(frames.length >= 2);
    const caller = frames[1];
    const locals = await scopeVars(caller.id, 'Locals');
    const pos = locals.find(v => v.name === 'pos');
    assert.ok(pos, `locals of ${caller.name}: ${locals.map(v => v.name).join(', ')}`);
    // vfs_read's pos argument points at the caller's pos
    const top = frames[0];
    assert.equal(num((await h.evaluate('&pos', caller.id)).result), num((await h.evaluate('pos', top.id)).result));
    assert.equal(num((await h.evaluate('*pos', top.id)).result), num((await h.evaluate('pos', caller.id)).result));
    // a name of vfs_read is not a name of its caller
    assert.match(await h.evaluateError('count', caller.id), /'count' is not declared|cannot evaluate/);
  });
});
