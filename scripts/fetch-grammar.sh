#!/bin/sh
# Fetches the TLA+ tree-sitter grammar (generated C: parser.c, scanner.c) from the npm registry
# into the build directory, once. Never committed: see README.
#	scripts/fetch-grammar.sh BUILD_DIR/grammar
set -eu
dest=$1
version=1.5.0
[ -f "$dest/package/src/parser.c" ] && exit 0
mkdir -p "$dest"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "spectap: fetching @tlaplus/tree-sitter-tlaplus@$version from npm"
(cd "$tmp" && npm pack --silent "@tlaplus/tree-sitter-tlaplus@$version" >/dev/null) || {
	echo "spectap: npm pack @tlaplus/tree-sitter-tlaplus@$version failed (is npm installed and the npm registry reachable?)" >&2
	exit 1
}
tar -xzf "$tmp"/tlaplus-tree-sitter-tlaplus-$version.tgz -C "$dest" package/src package/LICENSE package/package.json
[ -f "$dest/package/src/parser.c" ] || { echo "spectap: the grammar package has no src/parser.c" >&2; exit 1; }
