#!/usr/bin/env bash
# Fetch statically linked programs a distribution ships, for the real-program
# check of the user-space kernel (the same output as under qemu-user):
# Debian's busybox-static (glibc, built at Debian's default flags) for amd64
# and arm64, unpacked into test/userspace/debian/cache/<arch>/ (not committed).
# riscv64: bookworm has no riscv64 port; trixie has. Its busybox-static is
# downloaded through a private apt state (sources, lists and cache under
# cache/apt-riscv64, nothing of the host's apt configuration changed) into
# cache/riscv64/.
#   test/userspace/debian/fetch.sh        (as root for arm64: it adds the
#                                           foreign architecture to dpkg)
# Offline, or without apt: says so and exits 0 (the test then says what is
# missing and skips).
set -uo pipefail
cd "$(dirname "$0")"
mkdir -p cache
native=$(dpkg --print-architecture 2>/dev/null || echo none)
for arch in amd64 arm64; do
  if [ -x "cache/$arch/bin/busybox" ]; then continue; fi
  if [ "$native" = none ]; then echo "fetch.sh: no dpkg here: cannot fetch busybox-static:$arch"; continue; fi
  if [ "$arch" != "$native" ] && ! dpkg --print-foreign-architectures | grep -qx "$arch"; then
    if [ "$(id -u)" -ne 0 ]; then echo "fetch.sh: busybox-static:$arch needs 'dpkg --add-architecture $arch' (run as root)"; continue; fi
    dpkg --add-architecture "$arch" && apt-get update -qq >/dev/null 2>&1 || { echo "fetch.sh: apt-get update failed (offline?): skipping $arch"; continue; }
  fi
  rm -rf "tmp-$arch" && mkdir -p "tmp-$arch"
  if ! (cd "tmp-$arch" && apt-get download -q "busybox-static:$arch" >/dev/null 2>&1); then
    echo "fetch.sh: cannot download busybox-static:$arch (offline?): skipping"
    rm -rf "tmp-$arch"
    continue
  fi
  dpkg-deb -x "tmp-$arch"/busybox-static_*.deb "cache/$arch"
  ls "tmp-$arch" > "cache/$arch/PACKAGE"
  rm -rf "tmp-$arch"
  echo "fetch.sh: $(cat cache/$arch/PACKAGE) -> cache/$arch/bin/busybox"
done

# riscv64 from trixie, with apt's state kept under cache/apt-riscv64
if [ ! -x cache/riscv64/bin/busybox ] && [ "$native" != none ]; then
  A=$PWD/cache/apt-riscv64
  mkdir -p "$A/lists/partial" "$A/cache/archives/partial" "$A/dl"
  echo 'deb [arch=riscv64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main' > "$A/sources.list"
  O=(-o Dir::Etc::SourceList="$A/sources.list" -o Dir::Etc::SourceParts=/dev/null -o Dir::State::Lists="$A/lists"
     -o Dir::Cache="$A/cache" -o APT::Architecture=riscv64 -o APT::Architectures::=riscv64 -o Debug::NoLocking=1)
  rm -f "$A"/dl/*.deb
  if apt-get -qq "${O[@]}" update >/dev/null 2>&1 && (cd "$A/dl" && apt-get -q "${O[@]}" download busybox-static:riscv64 >/dev/null 2>&1); then
    rm -rf tmp-riscv64 && mkdir -p tmp-riscv64 cache/riscv64/bin
    dpkg-deb -x "$A"/dl/busybox-static_*.deb tmp-riscv64
    # trixie's package installs it as /usr/bin/busybox (merged /usr)
    cp tmp-riscv64/usr/bin/busybox cache/riscv64/bin/busybox
    (cd "$A/dl" && ls) > cache/riscv64/PACKAGE
    rm -rf tmp-riscv64 "$A"
    echo "fetch.sh: $(cat cache/riscv64/PACKAGE) -> cache/riscv64/bin/busybox"
  else
    echo "fetch.sh: cannot download busybox-static:riscv64 from trixie (offline?): skipping"
    rm -rf "$A"
  fi
fi
