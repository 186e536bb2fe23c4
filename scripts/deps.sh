#!/bin/sh
# Installs the Debian packages spectap needs, only those missing. Safe to run again.
set -eu

PKGS="gcc make clang libclang-rt-14-dev pkg-config libprotobuf-c-dev protobuf-c-compiler
libzstd-dev zstd jq libtree-sitter-dev libelf-dev libcapstone-dev golang-go etcd-server
golang-etcd-server-dev bpftool libbpf-dev zlib1g-dev systemtap-sdt-dev liblttng-ust-dev
lttng-tools liblttng-ctl-dev libbabeltrace2-dev zookeeper openjdk-17-jdk-headless libdw-dev
redis-server redis-tools"
# npm fetches the TLA+ grammar at build time; use the machine's own npm when it has one.
command -v npm >/dev/null 2>&1 || PKGS="$PKGS npm"

missing=""
for p in $PKGS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
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
