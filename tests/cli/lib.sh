# Assertions for the CLI tests; sourced. Each test script ends with `finish`.
: "${SPECTAP:?set SPECTAP to the spectap binary}"
CORPUS=${CORPUS:-../shared/corpora/etcd-raft-example/example.ndjson}
# A 3-node election in etcd-io/raft's zap-wrapped dialect, written for the project.
SAMPLE=tests/data/etcd/election.ndjson
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
bad() {
	failed=$((failed + 1))
	echo "  FAIL: $*" >&2
}
# check DESCRIPTION COMMAND...: the command must succeed
check() {
	d=$1
	shift
	if "$@"; then ok; else bad "$d"; fi
}
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then ok; else bad "$1: expected '$2', got '$3'"; fi
}
# check_contains DESCRIPTION FILE TEXT
check_contains() {
	if grep -qF -- "$3" "$2"; then ok; else
		bad "$1: '$3' not in $2:"
		sed 's/^/    /' "$2" >&2
	fi
}
# run_status EXPECTED_STATUS OUTFILE ERRFILE COMMAND...: runs, checks the exit status
run_status() {
	want=$1 out=$2 err=$3
	shift 3
	"$@" >"$out" 2>"$err"
	got=$?
	if [ "$got" = "$want" ]; then ok; else
		bad "exit status of '$*': expected $want, got $got"
		sed 's/^/    /' "$err" >&2
	fi
}
# have_corpus WHAT: true when the public etcd-io/raft corpus is there (CI has ../shared); else
# prints the one SKIP line that says what is skipped and why.
have_corpus() {
	[ -f "$CORPUS" ] && return 0
	echo "SKIP: $1: needs the etcd-io/raft corpus at $CORPUS (../shared is not beside this clone)"
	return 1
}
finish() {
	echo "$(basename "$0" .sh): $passed passed, $failed failed"
	echo "$passed $failed" >"${RESULTS:-/dev/null}"
	[ "$failed" -eq 0 ]
}
