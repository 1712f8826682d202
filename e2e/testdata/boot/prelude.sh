# prelude.sh: the start of every real-boot guest session (boot_real_test.go
# puts it before scenario.sh or realimage.sh), after guestLib.
# In the nested guest the scenario runs as an ordinary user, uid 2000, who
# owns the outer folder and may use /dev/kvm, as asb's users do; root only
# prepares that. (On a host that boots by itself it runs as the test does.)
if [ "$GUEST_SHAPE" = nested ] && [ "$(id -u)" = 0 ]; then
	echo 'user:x:2000:2000:user:/data/root:/bin/sh' >>/etc/passwd
	echo 'user:x:2000:' >>/etc/group
	chmod 0666 /dev/kvm
	echo 0 >/proc/sys/kernel/dmesg_restrict # on_fail quotes the guest kernel
	mkdir -p "$DATA/root"
	chown -R 2000:2000 "$DATA"
	note svm "$(grep -c -w svm /proc/cpuinfo)"
	note kvm "$(ls -l /dev/kvm 2>&1)"
	exec su -p -s /bin/sh user -c "sh $DATA/run.sh"
fi
note user "$(id -u)"
export DATA PATH="$DATA/bin:$DATA/msb/bin:$PATH" MSB_HOME="$DATA/msb-home" TMPDIR="$DATA/tmp" HOME="$DATA/root"
# image:build and image:load run through this stand-in: the image was built
# by the real podman on the test's host and saved to image.tar.
export ASB_BUILDER="$DATA/bin/builder"
mkdir -p "$MSB_HOME" "$TMPDIR" "$HOME"

# Under emulated SVM a few % of msb's boots and execs fail by themselves
# (docs/boot.md). What was retried is in $DATA/retried, and in the note
# "retried" when the session ends, for the tests to report.
trap 'note retried "$(tr "\n" " " <"$DATA/retried" 2>/dev/null)"' EXIT

# create NAME: asb task vm:create, retried once after msb rm --force.
create() {
	step "$1" timeout "${CREATE_LIMIT:-300}" asb task vm:create && return 0
	echo "$1:boot" >>"$DATA/retried"
	for v in $(msb ls -q); do msb rm --force "$v" >/dev/null 2>&1; done
	step "$1" timeout "${CREATE_LIMIT:-300}" asb task vm:create
}

# flaky CMD…: CMD, run once more when it failed in one of the ways msb
# fails by itself under emulation (the message, on either stream, says
# which: the relay or the agent not up in time on a loaded host, an exec
# without its exit event); any other failure stands.
FLAKES='before agent relay became available|exec session ended without exit event|startup timed out after .* before agent readiness'
flaky() {
	"$@" >"$DATA/.flaky.out" 2>"$DATA/.flaky.err"
	_frc=$?
	cat "$DATA/.flaky.out"
	cat "$DATA/.flaky.err" >&2
	[ $_frc = 0 ] && return 0
	_why=$(cat "$DATA/.flaky.out" "$DATA/.flaky.err" | grep -oE "$FLAKES" | head -n1 | cut -c1-60)
	[ -n "$_why" ] || return $_frc
	echo "$_n:$_why" | tr ' ' _ >>"$DATA/retried"
	"$@"
}
