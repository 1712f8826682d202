# guestlib.sh: sourced by every guest session's script before its own
# (testenv.GuestLib; nested_run.go). `step NAME CMD…` runs CMD and prints
# its exit code, seconds taken and output (base64, one line); `note KEY
# VALUE…` prints a value; `now` is seconds since boot.
#
# Every step ends: one still running after STEP_LIMIT seconds of the clock
# (1500 unless the script sets it) is ended with what it ran, and fails
# with exit 124 and a list of those processes. Commands bound their own
# waits (lib.sh's bounded names an msb client that never answered, and
# flaky retries that); this is the floor under them, so that one command
# no bound covers costs a step, not the test binary's whole deadline (CI
# of eb148e5: an unbounded vm:exec beat for 55 minutes).
DATA=${DATA:-/data}
now() { cut -d' ' -f1 /proc/uptime; }

# runs_under PID ROOT: PID is ROOT or runs under it (by /proc's parent links).
runs_under() {
	_u=$1
	while [ "${_u:-0}" -gt 1 ]; do
		[ "$_u" = "$2" ] && return 0
		read -r _us 2>/dev/null <"/proc/$_u/stat" || return 1
		_us=${_us##*) }
		_u=${_us#* }
		_u=${_u%% *}
	done
	return 1
}

# cmdline PID: PID's command line, words by spaces, bounded: reading it
# waits for the process's memory lock, which a stuck VM process may hold
# for good (its name, /proc/PID/comm, needs no lock).
cmdline() { timeout -s KILL 5 tr '\0' ' ' 2>/dev/null <"/proc/$1/cmdline"; }

# started PID: when PID started, in clock ticks since boot (/proc's stat,
# field 22), in $_st.
started() {
	read -r _st 2>/dev/null <"/proc/$1/stat" || return 1
	# shellcheck disable=SC2086
	set -- ${_st##*) }
	shift 19
	_st=$1
}

# step_procs ME SINCE: each process this shell started after ME (the
# step's watch, which started at SINCE, in ticks), but for ME's own: "PID
# NAME", one a line. What earlier steps left in the background (a lab's
# servers) is older; within ME's tick, a later fork has a higher PID.
step_procs() {
	for _p in /proc/[0-9]*; do
		_p=${_p#/proc/}
		[ "$_p" != $$ ] && runs_under "$_p" $$ && ! runs_under "$_p" "$1" || continue
		started "$_p" || continue
		[ "$_st" -gt "$2" ] || { [ "$_st" = "$2" ] && [ "$_p" -gt "$1" ]; } || continue
		read -r _pc 2>/dev/null <"/proc/$_p/comm" || continue
		echo "$_p $_pc"
	done
}

# waits PID: PID's state and where in the kernel it waits ("S
# do_wait"), from /proc (no lock needed): a command waiting on a child, a
# pipe or a lock for minutes, or one stuck in the kernel (D), says so.
waits() {
	read -r _ws 2>/dev/null <"/proc/$1/stat" || { echo gone; return; }
	_ws=${_ws##*) }
	_ww=
	read -r _ww 2>/dev/null <"/proc/$1/wchan" # no newline: read fails, yet sets it
	echo "${_ws%% *} ${_ww:-?}"
}

# step_doing ME SINCE: what the step runs now, for its heartbeat: the
# names of its processes (step_procs; sleeps left out) in brackets, then
# the command line of the newest that is not a shell. A session killed
# from outside (its limit, the test binary's deadline) loses the step's
# output; its last beat still says what it waited on (CI of 375b4da: a
# create beat for 45 minutes, its guest idle, and nothing said which of
# its commands had not returned).
step_doing() {
	_dn=""
	_dp=""
	while read -r _p _pc; do
		case $_pc in sleep) continue ;; sh | bash | ash | busybox | timeout) ;; *) _dp=$_p ;; esac
		_dn="$_dn $_pc"
	done <<EOS
$(step_procs "$1" "$2")
EOS
	printf '[%s]' "$(echo $_dn | cut -c1-120)"
	[ -n "$_dp" ] || return 0
	_dc=$(cmdline "$_dp" | cut -c1-160)
	printf ' %s (%s)' "${_dc% }" "$(waits "$_dp")"
}

# nap SECONDS: sleep, as a child that the watch's TERM trap ends with it
# (a killed shell leaves its running sleep behind, holding the session's
# output open until it ends: ci45, where that outlived the test's wait).
nap() {
	sleep "$1" &
	_nap=$!
	wait $_nap
}

# step_watch LIMIT: the step's companion. A heartbeat every STEP_BEAT
# seconds (the host takes a guest that prints nothing for minutes for hung:
# testenv.GuestStall) that says what the step runs (step_doing); once the
# step ran LIMIT seconds, its processes are listed in $DATA/.step.hung and
# killed, each second until the step ends. The step ends it with TERM,
# and it ends its nap.
step_watch() {
	trap 'kill $_nap 2>/dev/null; exit 0' TERM
	_wme=$(exec sh -c 'echo $PPID')
	started "$_wme"
	_wt=$_st
	_w0=$(date +%s)
	while [ $(($(date +%s) - _w0)) -lt "$1" ]; do
		nap "${STEP_BEAT:-60}"
		live_flush
		echo "@@asb beat $_n $(($(date +%s) - _w0))s $(step_doing "$_wme" "$_wt")"
	done
	{
		echo "step $_n: still running after $1 s, its limit (guestlib.sh's STEP_LIMIT): killed what it ran:"
		step_procs "$_wme" "$_wt" | while read -r _p _pc; do
			echo "  $_p $_pc: $(cmdline "$_p" | cut -c1-200)"
		done
	} >"$DATA/.step.hung"
	while :; do
		for _p in $(step_procs "$_wme" "$_wt" | cut -d' ' -f1); do kill -KILL "$_p" 2>/dev/null; done
		nap 1
	done
}

# step_tail FILE: FILE base64-encoded on one line, only its last
# STEP_KEEP bytes (256 KiB) after a line that says how much was left out:
# a command that printed for a long time (a terminal's redraws during a
# hung agent run) would otherwise cost minutes of encoding and of the
# serial console at the step's end, with nothing said meanwhile.
step_tail() {
	_sz=$(wc -c <"$1")
	_keep=${STEP_KEEP:-262144}
	if [ "$_sz" -le "$_keep" ]; then
		base64 <"$1" | tr -d '\n'
		return
	fi
	{ echo "[step: the first $((_sz - _keep)) of $_sz bytes left out]"; tail -c "$_keep" "$1"; } | base64 | tr -d '\n'
}

step() {
	_n=$1
	shift
	_t0=$(now)
	rm -f "$DATA/.step.hung" "$DATA/.step.live"
	_live=$DATA/.step.live
	step_watch "${STEP_LIMIT:-1500}" &
	_hb=$!
	"$@" >"$DATA/.step.out" 2>"$DATA/.step.err" </dev/null
	_rc=$?
	kill $_hb 2>/dev/null
	wait $_hb 2>/dev/null
	_live=
	if [ -e "$DATA/.step.hung" ]; then
		_rc=124
		cat "$DATA/.step.hung" >>"$DATA/.step.err"
	fi
	_t1=$(now)
	echo "@@asb step $_n $_rc $(awk "BEGIN{print $_t1-$_t0}") x$(step_tail "$DATA/.step.out") x$(step_tail "$DATA/.step.err")"
	if [ $_rc != 0 ] && [ -z "$_nodiag" ] && command -v on_fail >/dev/null 2>&1; then
		echo "@@asb diag $_n x$(on_fail "$_n" 2>&1 </dev/null | tail -n 400 | base64 | tr -d '\n')"
	fi
	return $_rc
}
# expect_fail NAME CMD…: a step whose failure is the point (no on_fail).
expect_fail() { _nodiag=1; step "$@"; _rc=$?; _nodiag=; return $_rc; }
note() { echo "@@asb note $*"; }
# live TEXT: from within a step (whose output goes to a file, and to the
# console only at its end), TEXT on the console at the step's next
# heartbeat: "@@asb live STEP SECONDS-SINCE-BOOT TEXT", one line. What a
# step's retries and bounds decided is known even when the session is
# killed before the step ends; a step that ends first says it in its own
# output (its callers write TEXT to the step's streams too). Through a
# file, not a descriptor of the console: a server a step leaves running
# would hold that open, and a direct run's output would never end. Only
# the heartbeat flushes it: a second flusher at the step's end raced the
# heartbeat it had just killed (ci41). Nothing outside a step.
live() {
	[ -n "$_live" ] || return 0
	printf '@@asb live %s %s %s\n' "${_n:-?}" "$(now)" "$(printf '%s' "$*" | tr '\n' ' ' | cut -c1-300)" >>"$_live"
}
# live_flush: the live lines written since the last flush, to the console.
live_flush() {
	[ -s "$DATA/.step.live" ] || return 0
	mv -f "$DATA/.step.live" "$DATA/.step.live.out" 2>/dev/null && cat "$DATA/.step.live.out"
}
