#!/usr/bin/env bash
# install-tools.sh TOOLS_DIR: install the real tools asb's end-to-end tests
# drive, once. Idempotent: when everything is in place it only checks (< 1 s).
#
#   TOOLS_DIR/msb-0.7.2/package/{bin/msb,lib/libkrunfw.so.*}  from npm
#   TOOLS_DIR/bin/msb  -> ../msb-0.7.2/package/bin/msb       (a symlink: msb
#                         finds libkrunfw through its own path, a copy breaks)
#   TOOLS_DIR/bin/task   go-task v3.54.0, the version asb embeds (benchmarks)
#   podman, docker.io, busybox-static, mmdebstrap            Debian packages
#   TOOLS_DIR/nested/    a QEMU guest that can boot microVMs, for the
#                         real-boot tests on hosts without CPU virtualization
#   kubetest/'s control plane, compiled into Go's build cache (a stamp:
#                         TOOLS_DIR/kubetest.key)
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

# --- nested can-boot host (the real-boot tests) -------------------------------
# A software-emulated x86-64 guest whose CPU exposes AMD SVM: its kernel gets
# a working /dev/kvm, and the real msb boots microVMs inside it on a host
# without CPU virtualization (docs/boot.md). Built from Debian's packages:
#   TOOLS_DIR/nested/qemu/        QEMU from trixie (mmdebstrap; bookworm's 7.2
#                                 panicked in nested SVM), run through its own
#                                 ld-linux
#   TOOLS_DIR/nested/vmlinux      Debian's kernel, uncompressed (PVH entry)
#   TOOLS_DIR/nested/initramfs    busybox, kvm-amd/virtio/ext4 modules, the
#                                 glibc msb links, a CA bundle, /init
# Keyed by what went in (this function, the kernel and busybox package
# versions, libc6's): a warm run only compares the key.
NESTED_SUITE=trixie
install_nested() {
	local dir="$TOOLS_DIR/nested"
	[ "$(uname -m)" = x86_64 ] || return 0
	if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" -ne 0 ]; then
		say "nested: needs root and apt-get (the real-boot tests skip without it, and fail in CI)"
		return 0
	fi
	# What the key reads changes only with apt's lists, dpkg's database or
	# this script: when none changed since the last check, nothing did.
	local quick kpkg key
	quick=$( { declare -f install_nested nested_initramfs
		stat -c '%n %Y' /var/lib/apt/lists /var/lib/dpkg/status 2>/dev/null; } | sha256sum | cut -c1-16)
	[ -f "$dir/key" ] && [ -f "$dir/quick" ] && [ "$(cat "$dir/quick")" = "$quick" ] && return 0
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	key=$( { declare -f install_nested nested_initramfs; echo "$NESTED_SUITE $kpkg"
		apt-cache policy "$kpkg" 2>/dev/null | awk '/Candidate/ {print $2}'
		dpkg-query -W -f '${Version}\n' busybox-static libc6 2>/dev/null; } | sha256sum | cut -c1-16)
	if [ -n "$kpkg" ] && [ -f "$dir/key" ] && [ "$(cat "$dir/key")" = "$key" ]; then
		echo "$quick" >"$dir/quick"
		return 0
	fi
	[ -n "$kpkg" ] || { say "nested: apt-cache knows no linux-image-amd64 (apt-get update?)"; return 1; }
	local tmp mirror
	tmp=$(mktemp -d "$TOOLS_DIR/.nested-XXXXXX") && chmod 755 "$tmp"
	mirror=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
	mirror=${mirror:-http://deb.debian.org/debian}
	say "nested: QEMU from $NESTED_SUITE (mmdebstrap, ~1 min), kernel $kpkg"
	if ! mmdebstrap --quiet --variant=minbase --include=qemu-system-x86 "$NESTED_SUITE" "$tmp/qemu" "$mirror" >"$tmp/mmdebstrap.log" 2>&1; then
		say "nested: mmdebstrap failed:"; tail -n 20 "$tmp/mmdebstrap.log"; rm -rf "$tmp"; return 1
	fi
	(cd "$tmp" && apt-get download -qq "$kpkg" 2>/dev/null && dpkg-deb -x ./*.deb kernel && rm -f ./*.deb)
	# vmlinux: the XZ payload of the bzImage, which starts at XZ's magic.
	local vmlinuz off
	vmlinuz=$(ls "$tmp"/kernel/boot/vmlinuz-*)
	off=$(LC_ALL=C grep -aobP '\xfd7zXZ\x00' "$vmlinuz" | head -n1 | cut -d: -f1)
	tail -c +"$((off + 1))" "$vmlinuz" | xz -dc >"$tmp/vmlinux" 2>/dev/null || true
	[ -s "$tmp/vmlinux" ] || { say "nested: no vmlinux in $vmlinuz"; rm -rf "$tmp"; return 1; }
	nested_initramfs "$tmp" || { rm -rf "$tmp"; return 1; }
	rm -rf "$tmp/kernel"
	echo "$key" >"$tmp/key"
	echo "$quick" >"$tmp/quick"
	rm -rf "$dir"
	mv "$tmp" "$dir"
	say "nested: ready in $dir ($("$dir/qemu/lib64/ld-linux-x86-64.so.2" --library-path "$dir/qemu/lib/x86_64-linux-gnu:$dir/qemu/usr/lib/x86_64-linux-gnu" "$dir/qemu/usr/bin/qemu-system-x86_64" --version | head -n1))"
}

# nested_initramfs DIR: DIR/initramfs from DIR/kernel and this host's busybox,
# glibc (for msb) and CA bundle. /init mounts the data disk (/dev/vda, ext4)
# on /data and runs /data/run.sh, then powers off.
nested_initramfs() {
	local root="$1/initrd" kver m
	kver=$(ls "$1/kernel/lib/modules")
	mkdir -p "$root"/{bin,dev,proc,sys,tmp,data,etc/ssl/certs,lib64,lib/x86_64-linux-gnu,lib/modules/"$kver"}
	cp /bin/busybox "$root/bin/busybox"
	cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
	for m in libc.so.6 libm.so.6 libdl.so.2 librt.so.1 libpthread.so.0 libgcc_s.so.1 libcap-ng.so.0; do
		cp -L "/lib/x86_64-linux-gnu/$m" "$root/lib/x86_64-linux-gnu/"
	done
	cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
	for m in virt/lib/irqbypass arch/x86/kvm/kvm arch/x86/kvm/kvm-amd drivers/crypto/ccp/ccp \
		drivers/virtio/virtio drivers/virtio/virtio_ring drivers/virtio/virtio_pci \
		drivers/virtio/virtio_pci_modern_dev drivers/virtio/virtio_pci_legacy_dev \
		drivers/block/virtio_blk fs/ext4/ext4 fs/jbd2/jbd2 fs/mbcache lib/crc16 crypto/crc32c_generic; do
		mkdir -p "$root/lib/modules/$kver/kernel/$(dirname "$m")"
		cp "$1/kernel/lib/modules/$kver/kernel/$m.ko" "$root/lib/modules/$kver/kernel/$m.ko" || return 1
	done
	busybox depmod -b "$root" "$kver"
	printf '%s\n' 'root:x:0:0:root:/root:/bin/sh' >"$root/etc/passwd"
	cat >"$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm /root; mount -t devpts devpts /dev/pts; mount -t tmpfs tmp /tmp
for m in kvm_amd virtio_pci virtio_blk crc32c_generic ext4; do modprobe "$m" || echo "nested-init: modprobe $m failed"; done
ip link set lo up 2>/dev/null
if mount -t ext4 /dev/vda /data; then
	cd /data && sh /data/run.sh
	echo "nested-init: run.sh exit $?"
	cd / && sync && umount /data
else
	echo "nested-init: no data disk"
fi
reboot -f
INIT
	chmod 755 "$root/init"
	(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null) >"$1/initramfs"
	rm -rf "$root"
}

# --- kubetest's control plane ----------------------------------------------
# kubetest/ (a module of its own) links kube-apiserver, etcd and
# agent-sandbox's controllers: cold, compiling them costs about 14 CPU
# minutes. Compile them here, once per kubetest/go.sum and Go release, into
# Go's build cache, so that make test only links; keyed by a stamp (a warm
# run compares it). A cache emptied since costs time, never a wrong result.
# `go test -c` compiles exactly what make test's go test needs: the test
# binary's packages and go test's own vet pass over every dependency. (A
# `go vet ./...` here ran all of vet's analyzers over the dependencies, a
# cache entry go test never reads: its vet keys carry its smaller set of
# analyzers, so a cold make test paid that pass a second time.)
install_kube() {
	local root key out
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	[ -f "$root/kubetest/go.sum" ] || return 0
	command -v go >/dev/null 2>&1 || { say "kubetest: go not found"; return 0; }
	key="$(go env GOVERSION) $(sha256sum "$root/kubetest/go.sum" | cut -d' ' -f1)"
	if [ "$(cat "$TOOLS_DIR/kubetest.key" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	say "kubetest: compiling the control plane and its tests into Go's build cache (minutes, once)"
	out=$(mktemp -d)
	if ! (cd "$root/kubetest" && go test -c -o "$out" ./...); then
		rm -rf "$out"
		return 1
	fi
	rm -rf "$out"
	echo "$key" >"$TOOLS_DIR/kubetest.key"
}

status=0
install_msb || status=1
install_debs || status=1
install_task || status=1
install_nested || status=1
install_kube || status=1
exit $status
