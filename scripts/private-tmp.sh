#!/usr/bin/env bash
# private-tmp.sh CMD…: runs CMD with TMPDIR a folder of its own, and removes
# that folder after it, whatever CMD left there.
#
# The tests make thousands of outer folders, and asb keeps each folder's
# lock file in the temporary folder by design (runner.FolderLockPath: one
# per outer folder, never removed, so that no undo can delete it from under
# a run that waits for it). For a user that is one small file per folder;
# for the suite it was about 1,200 files an hour of runs, left in /tmp.
#
# The prefix is kept short: msb puts unix sockets under MSB_HOME, which the
# tests make in TMPDIR (testenv.MSBHome), and a socket's path is limited to
# 107 bytes. ASB_PRIVATE_TMP tells the tests' own TestMain
# (testenv.PrivateState) that TMPDIR is private already.
set -uo pipefail
base=${TMPDIR:-/tmp}
dir=$(mktemp -d "$base/asb-t.XXXXXX") || exit 1
cleanup() {
	# A module cache a test made is read-only, as go makes it.
	chmod -R u+w "$dir" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
TMPDIR=$dir ASB_PRIVATE_TMP=$dir "$@"
