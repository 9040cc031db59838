#!/usr/bin/env bash
# The oracle for test/linux/dbg/vmlinuxDwarf.test.ts: what LLVM's own tools
# (llvm-dwarfdump, llvm-symbolizer; Debian's llvm package) read in Debian's
# vmlinux (cache/vmlinux, from fetch-vmlinux-dbg.sh) about one function of
# fs/open.c, do_sys_openat2:
#   package PKG VERSION                      what the vmlinux came from
#   function NAME LOW HIGH                   its DW_AT_low_pc / high_pc
#   param|variable NAME TYPE                 its DIE's direct children, types as llvm-dwarfdump names them
#   row ADDR LINE COLUMN stmt|- FILE         its unit's line-table rows within [LOW, HIGH) (FILE: dir/name)
#   symbolize ADDR FILE:LINE:COLUMN          llvm-symbolizer --no-inlines for each row address
#   struct NAME SIZE / member NAME TYPE OFF  the struct its parameter `how` points to, with its members
#
#   test/linux/dbg/make-golden.sh [OUT]      (default golden/do_sys_openat2.txt)
set -euo pipefail
cd "$(dirname "$0")"
out=${1:-golden/do_sys_openat2.txt}
fn=do_sys_openat2
elf=cache/vmlinux
for t in llvm-dwarfdump llvm-symbolizer nm python3; do command -v $t >/dev/null || { echo "make-golden.sh: needs $t" >&2; exit 1; }; done
[ -e "$elf" ] || { echo "make-golden.sh: no $elf: run fetch-vmlinux-dbg.sh" >&2; exit 1; }
addr=$(nm "$elf" | awk -v f="$fn" '$3 == f && ($2 == "T" || $2 == "t") && !a { a = "0x" $1 } END { print a }')
lookup=$(llvm-dwarfdump --lookup="$addr" "$elf")
die=$(printf '%s\n' "$lookup" | awk -v f="$fn" '/DW_TAG_subprogram/ { off = $1 } $0 ~ "DW_AT_name\t\\(\"" f "\"\\)" && !d { sub(":", "", off); d = off } END { print d }')
stmt=$(printf '%s\n' "$lookup" | sed -n 's/.*DW_AT_stmt_list\t(\(0x[0-9a-f]*\)).*/\1/p' | head -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
llvm-dwarfdump --debug-info="$die" -c "$elf" > "$tmp/die.txt"
llvm-dwarfdump --debug-line="$stmt" "$elf" > "$tmp/line.txt"
python3 - "$tmp" "$fn" "$(cat cache/PACKAGE) $(cat cache/VERSION)" > "$tmp/golden.txt" <<'PY'
import re, sys
tmp, fn, pkg = sys.argv[1:4]
print(f"package {pkg}")
die = open(f"{tmp}/die.txt").read().split("\n")
low = high = None
children = []
cur = None
for l in die:
    m = re.match(r"^0x[0-9a-f]+:(\s+)DW_TAG_(\w+)", l)
    if m:
        depth = len(m.group(1))
        cur = {"tag": m.group(2), "depth": depth}
        children.append(cur)
        continue
    if cur is None: continue
    m = re.search(r"DW_AT_(\w+)\t\((.*)\)$", l)
    if m: cur.setdefault(m.group(1), m.group(2))
top = children[0]
print(f"function {fn} {top['low_pc']} {top['high_pc']}")
low, high = int(top["low_pc"], 16), int(top["high_pc"], 16)
child_depth = min(c["depth"] for c in children[1:])
for c in children[1:]:
    if c["depth"] != child_depth or c["tag"] not in ("formal_parameter", "variable") or "name" not in c: continue
    t = re.search(r'"(.*)"', c.get("type", ""))
    print(f"{'param' if c['tag'] == 'formal_parameter' else 'variable'} {c['name'].strip(chr(34))} {t.group(1) if t else 'void'}")
dirs, files, rows = {}, {}, []
fi = None
for l in open(f"{tmp}/line.txt"):
    m = re.match(r'include_directories\[\s*(\d+)\] = "(.*)"', l)
    if m: dirs[int(m.group(1))] = m.group(2); continue
    m = re.match(r"file_names\[\s*(\d+)\]:", l)
    if m: fi = int(m.group(1)); files[fi] = {}; continue
    m = re.match(r'\s+name: "(.*)"', l)
    if m and fi is not None: files[fi]["name"] = m.group(1); continue
    m = re.match(r"\s+dir_index: (\d+)", l)
    if m and fi is not None: files[fi]["dir"] = int(m.group(1)); continue
    m = re.match(r"^(0x[0-9a-f]{16})\s+(\d+)\s+(\d+)\s+(\d+)\s+\d+\s+\d+\s*(.*)$", l)
    if m:
        a = int(m.group(1), 16)
        flags = m.group(5).split()
        if low <= a < high and "end_sequence" not in flags:
            f = files[int(m.group(4))]
            path = f["name"] if f.get("dir", 0) == 0 else f"{dirs[f['dir']]}/{f['name']}"
            rows.append((m.group(1), m.group(2), m.group(3), "stmt" if "is_stmt" in flags else "-", path))
for r in rows: print("row " + " ".join(r))
PY
# llvm-symbolizer: one answer per distinct row address (FILE:LINE:COLUMN, paths as the unit records them)
awk '$1 == "row" { print $2 }' "$tmp/golden.txt" | sort -u > "$tmp/addrs"
llvm-symbolizer --obj="$elf" --no-inlines < "$tmp/addrs" | awk 'NF' | paste - - > "$tmp/sym"
paste "$tmp/addrs" "$tmp/sym" | awk -F'\t' '{ print "symbolize " $1 " " $3 }' >> "$tmp/golden.txt"
# struct open_how: the parameter how's pointer type, then what it points to
ptr=$(awk '/DW_AT_name\t\("how"\)/ { f = 1; next } f && /DW_AT_type/ { match($0, /0x[0-9a-f]+/); print substr($0, RSTART, RLENGTH); exit }' "$tmp/die.txt")
st=$(llvm-dwarfdump --debug-info="$ptr" "$elf" | sed -n 's/.*DW_AT_type\t(\(0x[0-9a-f]*\).*/\1/p' | head -n 1)
llvm-dwarfdump --debug-info="$st" -c "$elf" | python3 -c '
import re, sys
cur = None
for l in sys.stdin:
    m = re.search(r"DW_TAG_(\w+)", l)
    if m: cur = {"tag": m.group(1)}; continue
    m = re.search(r"DW_AT_(\w+)\t\((.*)\)$", l)
    if not m or cur is None: continue
    cur[m.group(1)] = m.group(2)
    if cur["tag"] == "structure_type" and "name" in cur and "byte_size" in cur and not cur.get("done"):
        print("struct %s %d" % (cur["name"].strip(chr(34)), int(cur["byte_size"], 16))); cur["done"] = 1
    if cur["tag"] == "member" and "data_member_location" in cur and not cur.get("done"):
        t = re.search(r"\"(.*)\"", cur["type"]).group(1)
        print("member %s %s %d" % (cur["name"].strip(chr(34)), t, int(cur["data_member_location"], 16))); cur["done"] = 1
' >> "$tmp/golden.txt"
mkdir -p "$(dirname "$out")"
cp "$tmp/golden.txt" "$out"
echo "make-golden.sh: $(grep -c '^row' "$out") rows, $(grep -c '^symbolize' "$out") addresses -> $out"
