import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HandlerFault, LITERAL_POOL_BASE, compileHandler } from '../../emulator/handlers';
import { FakeEnv, X86_REGS } from './fakeEnv';
import { compile, diags, run } from './helpers';

function faultOf(fn: () => unknown): HandlerFault {
  try { fn(); } catch (e) { if (e instanceof HandlerFault) return e; throw e; }
  assert.fail('expected a HandlerFault');
}

describe('handler language: emulated memory, registers, faults', () => {
  test('dereference and indexing read and write emulated memory at the pointee width', () => {
    const env = new FakeEnv();
    env.map(0xffff888000001000n, 32);
    env.regs.set('si', 0xffff888000001000n);
    run('*(u32 *)(regs->si + 8) = 0xdeadbeef; ((u8 *)regs->si)[3] = 0x1ff; *(u64 *)regs->si += 2;', env);
    assert.deepEqual(env.writes.map(w => [w.addr - 0xffff888000001000n, w.size, w.value]), [[8n, 4, 0xdeadbeefn], [3n, 1, 0xffn], [0n, 8, 0xff000002n]]);
    assert.equal(run('return *(u16 *)(regs->si + 10);', env), 0xdeadn);
    assert.equal(run('return *(s8 *)(regs->si + 8);', env), -17n); // 0xef sign-extended
    assert.equal(run('u32 *q = (u32 *)regs->si; return q[2] == 0xdeadbeef;', env), 1n);
    assert.equal(run('return *((u8 *)regs->si + 3);', env), 0xffn);
    assert.equal(run('u8 *q = (u8 *)regs->si; return *&q[8] == 0xef && &q[8] == q + 8;', env), 1n);
  });

  test('kretprobe ri->data: entry stores through a u64 cast, return reads', () => {
    const env = new FakeEnv();
    env.map(0x5000n, 8);
    env.ri = { ret_addr: 0xffffffff81001234n, task: 0x9000n, data: 0x5000n };
    env.time = 1000n;
    compile('*(u64 *)ri->data = ktime_get(); return 0;', 'entry').run(env);
    env.time = 1750n;
    env.retval = BigInt.asUintN(64, -2n);
    compile('long rv = regs_return_value(regs); if (rv < 0) printk("ret %ld took %lld ns\\n", rv, ktime_get() - *(u64 *)ri->data);', 'return').run(env);
    assert.equal(env.text, 'ret -2 took 750 ns\n');
  });

  test('ri->data is char data[] (a byte area): indexed byte writes and reads, casts to wider types, no warning', () => {
    const env = new FakeEnv();
    env.map(0x5000n, 16);
    env.ri = { ret_addr: 0xffffffff81001234n, task: 0x9000n, data: 0x5000n };
    const r = compileHandler('ri->data[0] = 7; ri->data[1] = 0x1ff; ri->data[15] = ri->data[0] + 1; *(u32 *)(ri->data + 4) = 0xdeadbeef; return 0;', 'entry', { regNames: X86_REGS });
    assert.deepEqual(r.diagnostics, []);
    r.handler!.run(env);
    assert.deepEqual(env.writes.map(w => [w.addr - 0x5000n, w.size, w.value]), [[0n, 1, 7n], [1n, 1, 0xffn], [15n, 1, 8n], [4n, 4, 0xdeadbeefn]]);
    assert.equal(run('return ri->data[4] == (char)0xef && *(u64 *)ri->data == 0xdeadbeef0000ff07;', env, 'return'), 1n);
    assert.equal(run('u8 *b = (u8 *)ri->data; char *c = ri->data; return b[1] + (c == ri->data);', env, 'return'), 0x100n);
    // plain char follows the arch's ABI: signed on x86_64, unsigned on aarch64 / riscv64
    const x86 = compileHandler('return ri->data[1];', 'return', { regNames: X86_REGS, arch: 'x86_64' });
    const arm = compileHandler('return ri->data[1];', 'return', { regNames: ['x0', 'x1'], arch: 'aarch64' });
    assert.equal(x86.handler!.run(env), -1n);
    assert.equal(arm.handler!.run(env), 0xffn);
    assert.deepEqual(diags('return sizeof(ri->data[0]) + sizeof(*ri->data);', 'return'), []);
    assert.equal(run('return sizeof(ri->data[0]) + sizeof(*ri->data);', env, 'return'), 2n);
  });

  test('a bad address is a memory fault with the handler position', () => {
    const env = new FakeEnv();
    env.regs.set('di', 0xffffffffdead0000n);
    const f = faultOf(() => compile('int x = 1;\n  x = *(int *)regs->di;', 'pre').run(env));
    assert.equal(f.kind, 'memory');
    assert.equal(f.line, 2);
    assert.equal(f.column, 7);
    assert.equal(f.addr, 0xffffffffdead0000n);
    assert.match(f.message, /0xffffffffdead0000/);
    const w = faultOf(() => run('*(u64 *)regs->di = 1;', env));
    assert.equal(w.kind, 'memory');
  });

  test('NULL dereference is a null fault; division by zero a divide fault', () => {
    assert.equal(faultOf(() => run('return *(int *)0;')).kind, 'null');
    assert.equal(faultOf(() => run('char *s = NULL; return s[16];')).kind, 'null');
    const d = faultOf(() => run('int z = 0; return 5 / z;'));
    assert.equal(d.kind, 'divide');
    assert.equal(faultOf(() => run('long z = 0; return 5 % z;')).kind, 'divide');
    assert.equal(faultOf(() => run('int m = -2147483647 - 1; int n = -1; return m / n;')).kind, 'divide');
  });

  test('the step budget turns a runaway loop into a budget fault', () => {
    const h = compile('int i = 0;\nwhile (1) { i++; }', 'pre', { stepBudget: 500 });
    const f = faultOf(() => h.run(new FakeEnv()));
    assert.equal(f.kind, 'budget');
    assert.equal(f.line, 2);
    assert.equal(faultOf(() => compile('for (;;) ;', 'pre').run(new FakeEnv())).kind, 'budget');
    // a bounded loop within the budget is fine and the budget is per invocation
    const ok = compile('int s = 0; for (int i = 0; i < 100; i++) s += i; return s;', 'pre', { stepBudget: 400 });
    assert.equal(ok.run(new FakeEnv()), 4950n);
    assert.equal(ok.run(new FakeEnv()), 4950n);
  });

  test('writing a register changes the probed context through the env', () => {
    const env = new FakeEnv();
    env.symbols.set('fake_fork', 0xffffffff81002000n);
    const r = compile('regs->ip = symbol("fake_fork"); regs->ax += 1; return 1;', 'pre', { symbolExists: n => n === 'fake_fork' }).run(env);
    assert.equal(r, 1n);
    assert.deepEqual(env.regWrites, [{ name: 'ip', value: 0xffffffff81002000n }, { name: 'ax', value: 1n }]);
    env.regs.set('ax', 0xffffffffffffffffn);
    run('regs->ax++;', env);
    assert.equal(env.regs.get('ax'), 0n);
  });

  test('jprobe arguments come from the ABI argument registers', () => {
    const env = new FakeEnv();
    env.regs.set('di', 0x11n); env.regs.set('si', 0x22n); env.regs.set('cx', 0x4000n); env.regs.set('r9', 9n);
    compile('printk("%lx %lx %lx %lu", arg0, arg1, arg3, arg5); jprobe_return();', 'jprobe').run(env);
    assert.equal(env.text, '11 22 4000 9');
  });

  test('string literals are addresses in a read-only pool readable like memory', () => {
    const env = new FakeEnv();
    assert.equal(run('char *s = "abc"; return s[1] + strlen(s);', env), 98n + 3n);
    assert.equal(run('const char *s = "xyz"; return (unsigned long)s >= 0x5354524c00000000UL;', env), 1n);
    assert.equal(LITERAL_POOL_BASE, 0x5354524c00000000n);
    const f = faultOf(() => run('char *s = "abc"; s[0] = 1;', env));
    assert.equal(f.kind, 'memory');
    assert.equal(faultOf(() => run('char *s = "abc"; return s[10];', env)).kind, 'memory');
    env.current = { pid: 3, comm: 'bash', mm: 0x77n };
    assert.equal(run('return strcmp(current->comm, "bash") == 0 && current->pid == 3 && current->mm != 0;', env), 1n);
    env.map(0x3000n, 8); env.putBytes(0x3000n, 'bash\0');
    assert.equal(run('return strcmp((char *)0x3000, current->comm) == 0 && memcmp((void *)0x3000, "bas", 3) == 0 && strncmp("bat", "bar", 2) == 0;', env), 1n);
  });

  test('context objects: p, trapnr, flags, jiffies, smp_processor_id; missing probe is a context fault', () => {
    const env = new FakeEnv();
    env.probe = { addr: 0xffffffff81000010n, symbol_name: 'do_fork', offset: 0x10n, nmissed: 3n, flags: 0n };
    env.trapnr = 14;
    compile('printk("%s+%u missed=%lu trap=%d cpu=%d j=%lu", p->symbol_name, p->offset, p->nmissed, trapnr, smp_processor_id(), jiffies); return 1;', 'fault').run(env);
    assert.equal(env.text, 'do_fork+16 missed=3 trap=14 cpu=1 j=42');
    const bare = new FakeEnv();
    assert.equal(faultOf(() => run('return p->addr != 0;', bare)).kind, 'context');
    env.postFlags = 0n;
    assert.equal(compile('return flags;', 'post').run(env), 0n);
  });
});
