#!/bin/sh
# Installs the Debian packages spectap needs (the list below), only those missing. Safe to run
# again. `deps.sh --list` prints the package names: tests/cli/test_programs.sh checks that every
# program in `spectap doctor` comes from one of them.
set -eu

# One package per line; "pkg PATH": pkg, unless PATH exists already (a machine's own npm).
packages() {
	cat <<'LIST'
# build
gcc
make
clang
libclang-rt-14-dev
pkg-config
binutils
protobuf-c-compiler
libprotobuf-c-dev
libzstd-dev
libtree-sitter-dev
libelf-dev
libdw-dev
libcapstone-dev
libyaml-dev
zlib1g-dev
bpftool
libbpf-dev
systemtap-sdt-dev
liblttng-ust-dev
liblttng-ctl-dev
libbabeltrace2-dev
golang-go
golang-etcd-server-dev
golang-github-nats-io-nats-server-dev
openjdk-17-jdk-headless
npm /usr/bin/npm
nodejs /usr/bin/node
# run: the recorded systems and what the recorders run
etcd-server
etcd-client
iproute2
zookeeper
libzookeeper-java
libslf4j-java
openjdk-17-jre-headless
redis-server
redis-tools
nats-server
lttng-tools
# tests and demo
jq
zstd
procps
LIST
}

if [ "${1:-}" = --list ]; then
	packages | sed 's/#.*//' | awk 'NF { print $1 }'
	exit 0
fi

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=""
while read -r pkg unless rest; do
	case $pkg in '' | '#'*) continue ;; esac
	# "pkg PATH": a machine may bring the program another way (Node.js builds that carry npm).
	[ -n "$unless" ] && [ -e "$unless" ] && continue
	installed "$pkg" || missing="$missing $pkg"
done <<ALL
$(packages)
ALL
[ -z "$missing" ] && exit 0

echo "spectap: installing Debian packages:$missing"
if [ "$(id -u)" != 0 ]; then
	SUDO=sudo
	command -v sudo >/dev/null || {
		echo "spectap: need root (or sudo) to install:$missing" >&2
		exit 1
	}
else
	SUDO=
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q >/dev/null
# shellcheck disable=SC2086
$SUDO apt-get install -y -q --no-install-recommends $missing >/dev/null
echo "spectap: dependencies installed"
