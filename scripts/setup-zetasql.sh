#!/usr/bin/env bash
# Google's ZetaSQL analyzer (the GoogleSQL front end BigQuery is built on) for the tests: its local
# service, from the npm package @fivetrandevelopers/zetasql (MIT; ZetaSQL is Apache-2.0), and Python
# gRPC stubs generated from the protos the package ships.  Cached under
#   ${UNIVIEW_CACHE:-~/.cache/uniview}/zetasql/<version>-grpcio-tools-<version>/{remote_server.so,protos/,python/}
# Idempotent (returns at once when cached) and safe to run twice at once (built in a temporary folder,
# moved into place whole).  PYTHON must have grpcio-tools (the project's .venv with '.[dev]' has).
# Prints the cache folder on its last line.
set -euo pipefail

VERSION=1.13.0
PACKAGE="@fivetrandevelopers/zetasql@$VERSION"
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-$REPO/.venv/bin/python}"
fail() { echo "error: cannot install the ZetaSQL analyzer: $*" >&2; exit 1; }
# The stubs must match the protobuf runtime: key the cache by the grpcio-tools that generates them.
TOOLS=$("$PYTHON" -c "from importlib.metadata import version; print(version('grpcio-tools'))" 2>/dev/null) \
  || fail "$PYTHON has no grpcio-tools (pip install -e '.[dev]')"
CACHE="${UNIVIEW_CACHE:-$HOME/.cache/uniview}/zetasql/$VERSION-grpcio-tools-$TOOLS"

if [ -f "$CACHE/.complete" ]; then echo "$CACHE"; exit 0; fi
command -v npm >/dev/null 2>&1 || fail "npm (Node.js) is not installed; it fetches $PACKAGE from the npm registry"
[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || fail "the package ships its server for Linux x86-64 only"

work=$(mktemp -d "${TMPDIR:-/tmp}/uniview-zetasql.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE" > npm-pack.log 2>&1) || fail "npm pack $PACKAGE failed: $(tail -n 5 "$work/npm-pack.log")"
tar -xzf "$work"/*.tgz -C "$work" package/lib/zetasql/remote_server.so package/lib/zetasql/protos
mkdir -p "$work/out/python"
mv "$work/package/lib/zetasql/remote_server.so" "$work/out/remote_server.so"
chmod +x "$work/out/remote_server.so"
mv "$work/package/lib/zetasql/protos" "$work/out/protos"
GRPC_INCLUDE=$("$PYTHON" -c "import grpc_tools, os; print(os.path.join(os.path.dirname(grpc_tools.__file__), '_proto'))")
(cd "$work/out/protos" && find . -name '*.proto' | sed 's|^\./||' | sort | xargs "$PYTHON" -m grpc_tools.protoc \
  -I. -I"$GRPC_INCLUDE" --python_out="$work/out/python" --grpc_python_out="$work/out/python") \
  || fail "generating the Python stubs failed"
touch "$work/out/.complete"
mkdir -p "$(dirname "$CACHE")"
mv -T "$work/out" "$CACHE" 2>/dev/null || [ -f "$CACHE/.complete" ] || fail "could not place the analyzer in $CACHE"
echo "$CACHE"
