#!/usr/bin/env bash
# Build Linux's own kprobes samples (samples/kprobes/kprobe_example.c and
# kretprobe_example.c from Debian's linux-source-6.1, fetched by
# test/modules/linux/fetch-test-kprobes.sh) as modules for Debian's kernel
# (test/linux/fetch-kernel.sh), with Kbuild against Debian's own headers:
# linux-headers-<abi>-cloud-amd64 + linux-headers-<abi>-common +
# linux-kbuild-6.1 of the same version as the kernel, fetched with
# `apt-get download` + `dpkg-deb -x` into test/linux/cache/headers/, and
# Debian's gcc (the compiler the kernel was built with). Output:
#   test/linux/cache/modules/kprobe_example.ko, kretprobe_example.ko
# which make-initramfs.sh puts into the initramfs's /root.
# Missing inputs or tools: says so and exits 0 (the tests then say what is missing).
set -uo pipefail
cd "$(dirname "$0")"
me=build-modules.sh
[ -f cache/kernel/RELEASE ] || { echo "$me: no kernel (run test/linux/fetch-kernel.sh)"; exit 0; }
release=$(cat cache/kernel/RELEASE) version=$(cat cache/kernel/VERSION)
abi=${release%-cloud-amd64}
samples=../modules/linux/cache/linux-source-6.1/samples/kprobes
[ -f "$samples/kprobe_example.c" ] || { echo "$me: no $samples (run test/modules/linux/fetch-test-kprobes.sh 6.1)"; exit 0; }
command -v make >/dev/null && command -v gcc >/dev/null || { echo "$me: no make/gcc"; exit 0; }
src=$(cat ../modules/linux/cache/linux-source-6.1/VERSION 2>/dev/null || echo '?')
[ "$src" = "$version" ] || echo "$me: note: the samples are from linux-source-6.1 $src, the kernel is $version"
hdr=cache/headers/usr/src/linux-headers-$release
if [ ! -f cache/headers/VERSION ] || [ "$(cat cache/headers/VERSION)" != "$version" ] || [ ! -d "$hdr" ]; then
  rm -rf cache/headers cache/tmp-headers && mkdir -p cache/tmp-headers
  pkgs=("linux-headers-$release=$version" "linux-headers-$abi-common=$version" "linux-kbuild-6.1=$version")
  if ! (cd cache/tmp-headers && apt-get download -q "${pkgs[@]}" >/dev/null 2>&1); then
    echo "$me: cannot download ${pkgs[*]} (offline?): skipping"; rm -rf cache/tmp-headers; exit 0
  fi
  for d in cache/tmp-headers/*.deb; do dpkg-deb -x "$d" cache/headers; done
  rm -rf cache/tmp-headers
  echo "$version" > cache/headers/VERSION
fi
work=cache/modules-build
rm -rf "$work" && mkdir -p "$work" cache/modules
cp "$samples/kprobe_example.c" "$samples/kretprobe_example.c" "$work/"
printf 'obj-m := kprobe_example.o kretprobe_example.o\n' > "$work/Kbuild"
# the flavour's Makefile includes the common tree by its installed path (/usr/src/...): point it
# at the unpacked copy (the other links in the trees are relative)
sed -i "s|^include /usr/src/|include $(realpath cache/headers)/usr/src/|" "$hdr/Makefile"
find cache/headers/usr/src -maxdepth 3 -type l -lname '/*' | while read -r l; do
  echo "$me: note: $l points outside the unpacked headers ($(readlink "$l"))"
done
if ! make -s -C "$hdr" M="$(realpath "$work")" modules > "$work/build.log" 2>&1; then
  echo "$me: Kbuild failed (test/linux/$work/build.log):"; tail -n 20 "$work/build.log"; exit 1
fi
cp "$work"/kprobe_example.ko "$work"/kretprobe_example.ko cache/modules/
echo "$me: kprobe_example.ko, kretprobe_example.ko for $release -> test/linux/cache/modules/"
