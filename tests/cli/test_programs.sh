#!/bin/sh
# Every external program spectap runs comes from a Debian package that scripts/deps.sh installs:
# `spectap doctor` lists them (the tables the code takes their paths from), each one's package
# is in deps.sh's list and, on this machine, is the package that provides the file; no code names
# a program path outside those tables.
. tests/cli/lib.sh

run_status 0 "$T/doc.json" "$T/doc.err" "$SPECTAP" doctor --json
check "doctor lists the programs" [ "$(jq '.programs | length' "$T/doc.json")" -ge 15 ]
check_eq "nothing is missing after make deps" 0 "$(jq .missing "$T/doc.json")"

pkgs=$(sh scripts/deps.sh --list)
in_list() { echo "$pkgs" | grep -qx "$1"; }
# The package dpkg says provides a path, following Debian's merged /usr (/bin is /usr/bin).
owner() {
	for p in "$1" "$(readlink -f "$1")" "$(echo "$1" | sed 's|^/usr/|/|')" "$(readlink -f "$1" | sed 's|^/usr/|/|')"; do
		o=$(dpkg -S "$p" 2>/dev/null | grep -v '^diversion' | head -n 1 | cut -d: -f1)
		[ -n "$o" ] && { echo "$o"; return; }
	done
}
jq -r '.programs[] | "\(.path) \(.package)"' "$T/doc.json" >"$T/progs"
while read -r path package; do
	first=${package%%|*}
	if in_list "$first"; then ok; else bad "$path: its package $first is not in the list of scripts/deps.sh"; fi
	[ -e "$path" ] || continue
	o=$(owner "$path")
	case "|$package|" in
	*"|$o|"*) ok ;;
	*) bad "$path is provided by '${o:-no package}', not by $package as the table says" ;;
	esac
done <"$T/progs"

# The tables are the only place that names a program: no other path literal under /usr or /bin
# in the code (coreutils' /bin/true and /bin/sleep, which every Debian has, excepted).
grep -rnE '"/(usr/)?s?bin/[A-Za-z0-9_.-]+|"/usr/(lib|share)/(jvm|java|zookeeper)' --include=*.c --include=*.h \
	lib replay collector probes harness systems tools tests bench |
	grep -vE '_programs\.c:|collector/lttng_reader\.c:.*"/usr/bin/lttng-sessiond"|tools/cmd_doctor\.c:|"/bin/(true|sleep)"' >"$T/literals"
if [ -s "$T/literals" ]; then
	bad "program paths outside the tables (take them from etcd_programs, zk_programs, ...):"
	sed 's/^/    /' "$T/literals" >&2
else
	ok
fi
# Programs run by bare name from a shell or PATH lookup in the C code must be in the table too.
grep -rnoE 'exec(lp|vp)\("[a-z0-9_-]+"|(popen|system)\("[a-z0-9_-]+' --include=*.c lib replay collector probes harness systems tools |
	sed -E 's/.*\("//' | sort -u >"$T/bare"
while read -r prog; do
	if jq -e --arg p "$prog" '.programs | any(.path | endswith("/" + $p))' "$T/doc.json" >/dev/null; then ok; else
		bad "$prog is run by name but is not in spectap doctor's tables"
	fi
done <"$T/bare"
finish
