# realimage.sh: the real toolchain image's guest session
# (TestRealBootRealImage), after guestlib.sh and prelude.sh (and, in the
# nested guest, lab.sh with lab_up run as root: the network lab). /data/outer
# is the folder asb init wrote for OpenCode, untouched; copied here it is a
# folder made elsewhere, which its user approves (asb trust) as a teammate
# approves a first clone. The image podman built from its toolchain/ on the
# test's host is image.tar (loading it takes minutes under emulation).
cd "$DATA/outer" || exit 1
# A create takes 92-180 s (CI runs 20-31, one with a busy loop on each
# core), the first exec 7-29 s: 600 s is over three times the slowest, and
# a hang costs that, not the test binary's deadline (CI of 375b4da: a
# create whose tries and cleanup beat for 45 minutes).
CREATE_LIMIT=600
# A step that retries a command bounded at 600 s once may take twice that
# and a restart of the VM (guestlib.sh's limit of a step).
STEP_LIMIT=1500
step real_trust asb trust

# vmexec NAME ARGS…: asb task vm:exec -- ARGS, bounded; an exec msb never
# answered (seen once: no message, the guest idle) is retried by flaky, as
# msb's other failures are. The bound is the create's: the first exec into
# the real image pages in OpenCode, Node.js and podman (a later one may say
# less: EXEC_LIMIT).
vmexec() {
	_step=$1
	shift
	step "$_step" flaky bounded "${EXEC_LIMIT:-$CREATE_LIMIT}" asb task vm:exec -- "$@"
}

create real_create || exit 1
VM=$(msb ls -q | head -n1)
vmexec real_exec sh -c 'id -un; id -u; pwd; command -v opencode; node --version; podman --version'
# The real agent end to end, where the lab runs (net/agent.sh): OpenCode's
# own log of that run gives its version. Elsewhere --version does. Each
# start of OpenCode costs about 20 s under emulation (its 185 MB binary
# loads and compiles its bundle), so the session starts it once.
if [ -f "$DATA/net/agent.sh" ]; then
	. "$DATA/net/agent.sh"
else
	vmexec real_version opencode --version
fi
step real_rm asb task vm:rm
