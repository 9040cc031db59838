#!/usr/bin/env bash
# Fetch Debian's acpica-tools (Intel's ACPI Component Architecture: the
# same table parser Linux's drivers/acpi/acpica is) for its disassembler
# iasl, the oracle the platform's ACPI tables are checked with
# (test/system/acpi/iasl.test.ts): unpacked into test/linux/cache/acpica/
# (git-ignored; ~1 MB). Offline, or without apt: says so and exits 0.
set -uo pipefail
cd "$(dirname "$0")"
me=fetch-acpica.sh
[ -x cache/acpica/usr/bin/iasl ] && { echo "$me: already in test/linux/cache/acpica"; exit 0; }
command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null || { echo "$me: no apt-get/dpkg-deb here"; exit 0; }
mkdir -p cache/tmp-acpica
if ! (cd cache/tmp-acpica && apt-get download -q acpica-tools >/dev/null 2>&1); then
  echo "$me: cannot download acpica-tools (offline?): skipping"; rm -rf cache/tmp-acpica; exit 0
fi
dpkg-deb -x cache/tmp-acpica/acpica-tools_*.deb cache/acpica
ls cache/tmp-acpica > cache/acpica/PACKAGE
rm -rf cache/tmp-acpica
echo "$me: $(cat cache/acpica/PACKAGE) -> test/linux/cache/acpica/usr/bin/iasl"
