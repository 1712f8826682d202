#!/usr/bin/env bash
# install-tools.sh TOOLS_DIR: install the real tools asb's end-to-end tests
# drive, once. Idempotent: when everything is in place it only checks (< 1 s).
#
#   TOOLS_DIR/msb-0.7.2/package/{bin/msb,lib/libkrunfw.so.*}  from npm
#   TOOLS_DIR/bin/msb  -> ../msb-0.7.2/package/bin/msb       (a symlink: msb
#                         finds libkrunfw through its own path, a copy breaks)
#   TOOLS_DIR/bin/task   go-task v3.54.0, the version asb embeds (benchmarks)
#   podman, docker.io, busybox-static, mmdebstrap            Debian packages
#
# Without root or apt-get the Debian packages are reported missing and the
# script goes on: the tests then fail in CI (CI=true) and skip locally.
set -euo pipefail

MSB_VERSION=0.7.2
MSB_PKG=@superradcompany/microsandbox-linux-x64-gnu
TASK_VERSION=v3.54.0

if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 TOOLS_DIR" >&2
	exit 2
fi
mkdir -p "$1/bin"
TOOLS_DIR=$(cd "$1" && pwd)
BIN="$TOOLS_DIR/bin"

say() { echo "install-tools: $*"; }

# --- msb (npm) -------------------------------------------------------------
install_msb() {
	local dir="$TOOLS_DIR/msb-$MSB_VERSION"
	local msb="$dir/package/bin/msb"
	if [ ! -x "$msb" ] || ! ls "$dir"/package/lib/libkrunfw.so.* >/dev/null 2>&1; then
		case "$(uname -s)/$(uname -m)" in
		Linux/x86_64) ;;
		*)
			say "msb: no $MSB_PKG build for $(uname -s)/$(uname -m); install msb $MSB_VERSION yourself and put it on PATH"
			return 0
			;;
		esac
		if ! command -v npm >/dev/null 2>&1; then
			say "msb: npm not found; install Node.js and npm, then rerun"
			return 1
		fi
		say "msb $MSB_VERSION: npm pack $MSB_PKG@$MSB_VERSION into $dir"
		local tmp
		tmp=$(mktemp -d "$TOOLS_DIR/.msb-XXXXXX")
		(cd "$tmp" && npm pack --silent "$MSB_PKG@$MSB_VERSION" >/dev/null && tar xzf ./*.tgz && rm -f ./*.tgz)
		if [ ! -x "$tmp/package/bin/msb" ]; then
			rm -rf "$tmp"
			say "msb: the npm package has no package/bin/msb"
			return 1
		fi
		rm -rf "$dir"
		mv "$tmp" "$dir"
	fi
	if [ "$(readlink "$BIN/msb" 2>/dev/null || true)" != "../msb-$MSB_VERSION/package/bin/msb" ]; then
		ln -sfn "../msb-$MSB_VERSION/package/bin/msb" "$BIN/msb"
		say "msb: linked $BIN/msb -> $msb"
	fi
	local got
	got=$("$BIN/msb" --version 2>&1 || true)
	if [ "$got" != "msb $MSB_VERSION" ]; then
		say "msb: $BIN/msb --version printed '$got', want 'msb $MSB_VERSION'"
		return 1
	fi
}

# --- Debian packages -----------------------------------------------------------
install_debs() {
	local missing=()
	command -v podman >/dev/null 2>&1 || missing+=(podman)
	# docker.io brings both dockerd and a docker CLI.
	command -v dockerd >/dev/null 2>&1 && command -v docker >/dev/null 2>&1 || missing+=(docker.io)
	[ -x /bin/busybox ] && file_is_static /bin/busybox || missing+=(busybox-static)
	# The real-image test builds its Debian base from packages (no registry).
	command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
	[ ${#missing[@]} -eq 0 ] && return 0
	if ! command -v apt-get >/dev/null 2>&1; then
		say "missing ${missing[*]}, and there is no apt-get: install them yourself (the real-tool tests skip without them)"
		return 0
	fi
	if [ "$(id -u)" -ne 0 ]; then
		say "missing ${missing[*]}: run as root (sudo make tools) or install them yourself (the real-tool tests skip without them)"
		return 0
	fi
	say "apt-get install ${missing[*]}"
	apt-get update -qq
	# With recommends: that is how podman and docker.io were tested here.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

# file_is_static: a busybox that runs in a FROM scratch image needs no
# dynamic loader. Debian's busybox-static is; the plain busybox package is not.
file_is_static() {
	# ldd fails on an executable without a dynamic loader.
	[ -x "$1" ] && ! ldd "$1" >/dev/null 2>&1
}

# --- go-task ---------------------------------------------------------------
install_task() {
	if [ -x "$BIN/task" ] && "$BIN/task" --version 2>/dev/null | grep -q "${TASK_VERSION#v}"; then
		return 0
	fi
	if ! command -v go >/dev/null 2>&1; then
		say "task: go not found; cannot build go-task $TASK_VERSION (only the benchmark needs it)"
		return 0
	fi
	# Inside asb's own module (which requires go-task at this version), build
	# it from there: same sources and dependency versions as the embedded
	# library, and the build cache of asb's own build is reused (a cold
	# `go install …@version` compiles go-task's ~300 dependencies again:
	# minutes, not seconds).
	local root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	if [ -f "$root/go.mod" ] && grep -q "github.com/go-task/task/v3 $TASK_VERSION" "$root/go.mod"; then
		say "task $TASK_VERSION: go build github.com/go-task/task/v3/cmd/task (asb's module) into $BIN"
		if (cd "$root" && GOFLAGS=-buildvcs=false go build -o "$BIN/task" github.com/go-task/task/v3/cmd/task); then
			return 0
		fi
		say "task: building inside asb's module failed; trying go install"
	fi
	say "task $TASK_VERSION: go install github.com/go-task/task/v3/cmd/task@$TASK_VERSION"
	GOBIN="$BIN" GOFLAGS=-buildvcs=false go install "github.com/go-task/task/v3/cmd/task@$TASK_VERSION"
}

status=0
install_msb || status=1
install_debs || status=1
install_task || status=1
exit $status
