# steps_speed.sh: what a warm run starts, in the booted guest (issue 36;
# scenario.sh sources it while the first VM runs and the warm path is
# recorded). Every msb process goes through a shim that writes its command
# line down first: a warm asb task agent and a warm vm:exec each start the
# one msb exec, and nothing else of msb (TestRealBootWarmIsOneExec).
mkdir -p "$DATA/shim"
printf '#!/bin/sh\necho "msb $*" >>"$DATA/msb-calls"\nexec "$DATA/msb/bin/msb" "$@"\n' >"$DATA/shim/msb"
chmod 0755 "$DATA/shim/msb"
calls() { : >"$DATA/msb-calls"; PATH="$DATA/shim:$PATH" "$@" >/dev/null 2>&1; echo "exit $?"; cat "$DATA/msb-calls"; }
step speed_calls_agent calls ptyrun asb task agent
step speed_calls_exec calls asb task vm:exec -- true
# A VM stopped behind asb's back: the warm run proves nothing, the engine
# starts the VM, then attaches (no msb exec into a stopped VM, which msb
# would start itself, without the secrets asb hands msb start).
msb stop "$VM" >/dev/null 2>&1
step speed_calls_stopped calls flaky timeout 300 asb task vm:exec -- true
# asb's own start under emulation beside msb's and beside the start of
# any Go program (floor: a cobra executable with one subcommand, make
# bench's) and of the harness's own step (true), medians in the test's
# log: what a warm run adds over the bare msb exec is about one asb start.
for i in 1 2 3 4 5; do
	step "speed_asb_version$i" asb version
	step "speed_msb_version$i" msb --version
	step "speed_go_floor$i" floor version
	step "speed_true$i" true
done
