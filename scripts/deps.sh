#!/bin/sh
# Installs the Debian packages spectap needs (scripts/packages), only those missing. Safe to
# run again.
set -eu

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

missing=""
list=$(dirname "$0")/packages
while read -r pkg unless rest; do
	case $pkg in '' | '#'*) continue ;; esac
	# "pkg PATH": a machine may bring the program another way (Node.js builds that carry npm).
	[ -n "$unless" ] && [ -e "$unless" ] && continue
	installed "$pkg" || missing="$missing $pkg"
done <"$list"
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
