/**
 * The ACPI tables through ACPICA's own disassembler (Debian's iasl, from
 * the same code base as Linux's drivers/acpi/acpica; fetched by
 * test/linux/fetch-acpica.sh): each table disassembles with no
 * "Incorrect checksum" or error, and the fields Linux uses read back as
 * built. Without iasl outside CI the test says how to get it and skips.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildAcpi } from '../../../emulator/system/acpi/tables';
import { LINUX_CACHE } from '../linuxFiles';
import { unfetched } from '../../util/fetched';

const IASL = join(LINUX_CACHE, 'acpica', 'usr', 'bin', 'iasl');

test('iasl disassembles every table without a checksum or structure complaint; MADT / FADT / DSDT fields as built', t => {
  if (!existsSync(IASL)) {
    const why = 'no iasl (test/linux/fetch-acpica.sh)';
    unfetched(t, why);
    return;
  }
  const blob = buildAcpi({ cpus: 2, ioApicId: 2 });
  const dir = mkdtempSync(join(tmpdir(), 'kpd-acpi-'));
  try {
    const dsl = new Map<string, string>();
    for (const [sig, at] of blob.tables) {
      const off = at - blob.base;
      const len = sig === 'FACS' ? 64 : new DataView(blob.bytes.buffer, blob.bytes.byteOffset).getUint32(off + 4, true);
      const file = join(dir, `${sig.toLowerCase()}.dat`);
      writeFileSync(file, blob.bytes.subarray(off, off + len));
      const r = spawnSync(IASL, ['-d', file], { encoding: 'utf8', cwd: dir });
      assert.equal(r.status, 0, `${sig}: iasl ${r.stdout}${r.stderr}`);
      const text = readFileSync(file.replace(/\.dat$/, '.dsl'), 'utf8');
      assert.doesNotMatch(text, /Incorrect checksum|Error|Invalid|Unknown/i, `${sig}:\n${text}`);
      dsl.set(sig, text);
    }
    const madt = dsl.get('APIC')!;
    assert.equal([...madt.matchAll(/Subtable Type : 00 \[Processor Local APIC\]/g)].length, 2);
    assert.match(madt, /Subtable Type : 01 \[I\/O APIC\][^[]*\n.*\n.*I\/O Apic ID : 02[\s\S]*?Address : FEC00000/);
    assert.match(madt, /Source : 00\s+\[[^\]]+\]\s+Interrupt : 00000002/);
    const fadt = dsl.get('FACP')!;
    assert.match(fadt, /PM Timer Block Address : 00000608/);
    assert.match(fadt, /8042 Present on ports 60\/64 \(V2\) : 0/);
    assert.match(fadt, /Reset Register Supported \(V2\) : 1/);
    assert.match(dsl.get('DSDT')!, /Name \(_S5, Package \(0x04\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
