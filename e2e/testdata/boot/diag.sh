# diag.sh: on_fail, which guestLib's step runs when a step fails (not for
# expect_fail): what the guest can say about it, for the test's message
# (testenv.Step.Why quotes each "== " section's last lines). Sourced by
# every real-boot guest session, after guestLib. Bounded: under emulation
# each msb call takes seconds, and a broken msb must not hang the session.
on_fail() {
	echo "== msb ls"
	timeout 30 msb ls 2>&1 | tail -n 20
	for _v in $(timeout 30 msb ls -q 2>/dev/null); do
		echo "== msb logs $_v, system (msb's and the VM kernel's diagnostics)"
		timeout 30 msb logs "$_v" --source system --tail 40 --no-color 2>&1
		echo "== msb logs $_v, the primary session's output"
		timeout 30 msb logs "$_v" --source stderr,output --tail 30 --no-color 2>&1
	done
	# The agent's own log, in its home volume (OpenCode's, under its data
	# folder): the newest two files.
	for _f in $(find "$MSB_HOME/volumes" -path '*/.local/share/opencode/log/*' -type f 2>/dev/null | sort | tail -n 2); do
		echo "== the agent's own log: ${_f#"$MSB_HOME"/volumes/}"
		tail -n 40 "$_f"
	done
	echo "== the guest's kernel (dmesg)"
	dmesg 2>&1 | tail -n 30
}
