#!/bin/sh
# docs/your-spec.md runs as written: its ```sh blocks run in order in one shell (as `spectap`,
# $SPECTAP), each must succeed, and the output of a block followed by a ```text block must be
# that text (timings left out). Its spec and mapping are the files it shows.
. tests/cli/lib.sh
G=docs/your-spec.md

# Splits the guide into numbered blocks: $T/b.N.sh and, after it, $T/b.N.txt.
awk -v dir="$T" '
	/^```sh$/ { n++; out = dir "/b." n ".sh"; printf "" > out; on = 1; next }
	/^```text$/ { out = dir "/b." n ".txt"; printf "" > out; on = 1; next }
	/^```/ { on = 0; next }
	on { print >> out }
' "$G"
blocks=$(ls "$T"/b.*.sh | wc -l)
check "the guide has its commands" [ "$blocks" -ge 4 ]

spectap() { "$SPECTAP" "$@"; }
strip() { sed 's/  \[[0-9.]* s, [0-9]* windows\/s\]$//'; }
i=1
while [ "$i" -le "$blocks" ]; do
	# Run in this shell, so that the blocks share their variables (W).
	. "$T/b.$i.sh" >"$T/out.$i" 2>"$T/err.$i"
	rc=$?
	if [ "$rc" -ne 0 ]; then
		bad "guide block $i exited $rc:"
		sed 's/^/    /' "$T/b.$i.sh" "$T/err.$i" >&2
	else
		ok
	fi
	if [ -f "$T/b.$i.txt" ]; then
		if strip <"$T/out.$i" | diff -u "$T/b.$i.txt" - >"$T/diff.$i"; then ok; else
			bad "guide block $i: its output is not the guide's:"
			sed 's/^/    /' "$T/diff.$i" >&2
		fi
	fi
	i=$((i + 1))
done

# The spec lines the guide shows are Elect.tla's.
awk '/^```tla$/ { on = 1; next } /^```/ { on = 0 } on' "$G" >"$T/shown"
check "the guide shows spec lines" [ -s "$T/shown" ]
missing=$(grep -vxF -f docs/your-spec/Elect.tla "$T/shown" | head -1)
check_eq "every line the guide shows is in docs/your-spec/Elect.tla" "" "$missing"
finish
