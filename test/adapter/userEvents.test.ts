/**
 * DebugClient test: kprobe_events defined from user space while the
 * debugger runs show in the Kprobes view. Debian's busybox (the launch's
 * rootfs) writes `p:myfork kernel_clone` into /sys/kernel/tracing/kprobe_events
 * and enables it; at the next stop the probe list (the view's source) has
 * the event's row at kernel_clone with its hits, beside the user's own
 * breakpoint, and after `-:myfork` it is gone again.
 */
import { test, describe, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { ProbeRequest, ProbeStateBody } from '../../adapter/dapCustom';
import { Harness, within } from './dapHarness';
import { repoPath } from '../util/paths';
import { debianBusybox } from '../userspace/debian/busybox';
import { unfetched } from '../util/fetched';

const h = new Harness();
const KERNEL = repoPath('examples', 'kernel', 'build', 'kernel-x86_64.elf');
const T = '/sys/kernel/tracing';

async function probeList(): Promise<ProbeStateBody> {
  return (await within(h.dc.customRequest(ProbeRequest.list) as Promise<DebugProtocol.Response>, 'probe list')).body as ProbeStateBody;
}

describe('adapter: kprobe_events written by a user program while the debugger runs', () => {
  let root = '';
  let bb: string | undefined;
  before(async () => {
    bb = debianBusybox('amd64');
    await h.startServer();
    root = mkdtempSync(join(tmpdir(), 'kprobe-userevents-'));
    mkdirSync(join(root, 'bin'));
    if (bb) copyFileSync(bb, join(root, 'bin', 'busybox'));
  });
  after(async () => {
    await h.stopServer();
    rmSync(root, { recursive: true, force: true });
  });
  beforeEach(async () => { await h.startClient(); });
  afterEach(async () => { await h.dc.stop(); });

  test('the event defined through tracefs is a Kprobes row at kernel_clone with its hits; removed with -:EVENT, its row goes', async t => {
    if (!bb) { unfetched(t, "Debian's busybox-static (amd64) could not be fetched (offline?): run test/userspace/debian/fetch.sh"); return; }
    // each step ends in a process exit (do_exit): a function breakpoint there stops after the step's writes
    const script = `echo 'p:myfork kernel_clone' > ${T}/kprobe_events; echo 1 > ${T}/events/kprobes/myfork/enable; `
      + `/bin/busybox true; /bin/busybox true; echo 0 > ${T}/events/kprobes/myfork/enable; echo '-:myfork' >> ${T}/kprobe_events; /bin/busybox true`;
    await h.launchWith(async () => {
      const r = await h.dc.setFunctionBreakpointsRequest({ breakpoints: [{ name: 'do_exit' }] });
      assert.equal(r.body.breakpoints[0].verified, true, JSON.stringify(r.body.breakpoints[0]));
    }, { program: KERNEL, rootfs: root, exec: [`/bin/busybox sh -c "${script}"`] });
    const rowOf = (st: ProbeStateBody): ProbeStateBody['kprobes'][number] | undefined => st.kprobes.find(p => p.event === 'kprobes/myfork');
    const seen: number[] = [];
    let removedAfterSeen = false;
    for (let i = 0; i < 12; i++) {
      const stop = await h.continueToStop();
      assert.equal(stop.body.reason, 'breakpoint', JSON.stringify(stop.body));
      const st = await probeList();
      assert.ok(st.kprobes.some(p => p.symbol === 'do_exit'), JSON.stringify(st.kprobes.map(p => p.name)));
      const row = rowOf(st);
      if (row) {
        assert.equal(row.symbol, 'kernel_clone', JSON.stringify(row));
        assert.equal(row.offset, 0);
        seen.push(row.nhit);
      } else if (seen.length) { removedAfterSeen = true; break; }
    }
    assert.ok(seen.length >= 2, `the event's row was seen at ${seen.length} stops`);
    assert.ok(seen[seen.length - 1] >= 2 && seen[seen.length - 1] > seen[0], `its hits grow with the forks: ${seen.join(', ')}`);
    assert.ok(removedAfterSeen, 'after -:myfork the row is gone');
  });
});
