#!/bin/sh
# Builds tests/go/offsets against Debian's golang-etcd-server-dev source, offline, and prints its
# JSON. The package raft gets one extra file only for this build, through `go build -overlay`
# (overlay/raft_spectap_offsets.go.in); nothing of etcd is copied.
#   ETCD_GOPATH  GOPATH holding src/go.etcd.io/etcd (default /usr/share/gocode)
#   OUT          where to keep the binary (default: a temporary directory, removed)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
gopath=${ETCD_GOPATH:-/usr/share/gocode}
raftdir=$gopath/src/go.etcd.io/etcd/raft
[ -f "$raftdir/raft.go" ] || { echo "run.sh: no etcd raft source in $raftdir (golang-etcd-server-dev)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '{"Replace": {"%s/spectap_offsets.go": "%s/overlay/raft_spectap_offsets.go.in"}}\n' \
	"$raftdir" "$here" >"$tmp/overlay.json"
# go needs a build cache; without HOME use one in /tmp.
if [ -z "${GOCACHE:-}" ] && [ -z "${HOME:-}" ]; then export GOCACHE=/tmp/spectap-gocache; fi
bin=${OUT:-$tmp/offsets}
(cd "$here" && GO111MODULE=off GOPATH="$gopath" GOPROXY=off GOFLAGS= \
	go build -overlay "$tmp/overlay.json" -o "$bin" .)
"$bin"
