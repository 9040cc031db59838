#!/usr/bin/env bash
# Fetch statically linked programs a distribution ships, for the real-program
# check of the user-space kernel (the same output as under qemu-user):
# Debian's busybox-static (glibc, built at Debian's default flags) for amd64
# and arm64, unpacked into test/userspace/debian/cache/<arch>/ (not committed).
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
