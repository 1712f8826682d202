# lib.sh: what every real-boot guest session shares, after guestlib.sh and
# before its own script: on_fail, and the retries of what msb does by itself.
#
# on_fail: which guestlib.sh's step runs when a step fails (not for
# expect_fail): what the guest can say about it, for the test's message
# (testenv.Step.Why quotes each "== " section's last lines). Bounded: under
# emulation each msb call takes seconds, and a broken msb must not hang the
# session.
on_fail() {
	echo "== msb ls"
	timeout 30 msb ls 2>&1 | tail -n 20
	for _v in $(timeout 30 msb ls -q 2>/dev/null); do
		# msb logs at debug level (asb's create asks it to, for network
		# log): every virtio-fs request is a line; what explains a failure
		# is at info and above.
		echo "== msb logs $_v, system (msb's and the VM kernel's diagnostics, DEBUG lines left out)"
		timeout 30 msb logs "$_v" --source system --tail 2000 --timestamps --no-color 2>&1 | grep -v -E '[[:space:]]DEBUG[[:space:]]' | tail -n 40
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

# say TEXT: TEXT on the step's standard error, and live (guestlib.sh) on
# the console by the step's next heartbeat.
say() {
	echo "$*" >&2
	live "$*"
}

# What msb does by itself under emulation, each kind named by its message
# (on either stream) and retried by flaky; docs/testing.md has the
# table. Any other failure stands: a retry that hides an asb defect would be
# one. "msb did not return" is bounded's verdict on a command that hung
# inside an msb client (below).
FLAKES='before agent relay became available|exec session ended without exit event|startup timed out after .* before agent readiness|msb did not return within [0-9]+ s|agent client error: reader closed before response|graceful stop of sandbox .* timed out after'

# RESET: libkrun's line for a VM whose kernel reset, which asb quotes from
# msb's log of a VM whose create did not finish before it removes it (ci16:
# a create's VM stopped 4 s after its boot, and its log went with it), and
# which vm_reset_since looks for in msb's log. flaky names a failure by it
# before FLAKES.
RESET='Received KVM_EXIT_SHUTDOWN'
# STARTED: msb's line in a VM's system log as it starts.
STARTED='--- sandbox started ---'

# NOSECRETS: msb's refusal to start a VM whose secrets' values are not in
# its environment, which a bare msb exec into a stopped VM meets (msb starts
# it first; asb would have handed msb the values).
NOSECRETS='invalid config: secret [A-Za-z0-9_]+: host environment variable [A-Za-z0-9_]+ is not set'

# GIT_UNLOCK: what a command in the VM that commits runs first, in the
# repository's folder, so that it can run twice (flaky). A try msb lost
# ("exec session ended without exit event") may have stopped in the middle
# of git, whose lock files stay (a session's commit, 2026-12-07): it waits
# for any git still running in the VM, then removes them.
GIT_UNLOCK='while grep -qx git /proc/[0-9]*/comm 2>/dev/null; do sleep 1; done; find .git -name "*.lock" -type f -exec rm -f {} \;'

# flaky CMD…: CMD, run once more when it failed in one of the ways of
# FLAKES (after $FLAKY_CLEANUP, when set), and a third time when the retry
# failed in another of them (ci20: a create msb gave up on after its 180 s
# readiness timeout, then its retry's VM kernel reset: two independent
# faults of the emulation). The same kind twice stands: it is not chance;
# but for the VM's kernel resetting (a triple fault under emulated SVM),
# which no command in the VM can make happen (ci59: twice in a row in the
# network session's agent run, as OpenCode ran; the same load resets the
# nested guest itself in the real image's session). What was retried goes
# to $DATA/retried, by step and kind.
flaky() {
	_fkinds=" "
	while :; do
		_fs0=$(date -u +%Y-%m-%dT%H:%M:%S)
		"$@" >"$DATA/.flaky.out" 2>"$DATA/.flaky.err"
		_frc=$?
		[ $_frc = 0 ] || live "flaky: exit $_frc: $(tail -n 2 "$DATA/.flaky.err")"
		cat "$DATA/.flaky.out"
		cat "$DATA/.flaky.err" >&2
		[ $_frc = 0 ] && return 0
		# A failure in a try during which the VM's kernel reset is that
		# reset, whatever msb said of it: its output shows it (the end of
		# msb's log, which asb prints when a create fails: a create2 said
		# "before agent relay became available" twice so), or msb's log
		# does (ci84: an exec's retry said "exec session ended without
		# exit event" as its VM reset). Named by msb's message otherwise,
		# each was not retried the second time, as the same kind.
		# A bare msb exec that found the VM stopped starts it without the
		# secrets, and says so (NOSECRETS): there the reset is looked for
		# since the VM's last start, which may be before the try (2026-12-07:
		# the VM reset as it sat idle after vm_git; the next two steps, bare
		# execs, failed so, and were not retried). No start comes between
		# such a reset and the refusal, so that look covers the try's too.
		if grep -qF "$RESET" "$DATA/.flaky.out" "$DATA/.flaky.err"; then
			_why=$RESET
		elif grep -qE "$NOSECRETS" "$DATA/.flaky.out" "$DATA/.flaky.err"; then
			_why=$(vm_reset_since started)
		else
			_why=$(vm_reset_since "$_fs0")
		fi
		[ -n "$_why" ] || _why=$(cat "$DATA/.flaky.out" "$DATA/.flaky.err" | grep -oE "$FLAKES" | head -n1 | cut -c1-60)
		[ -n "$_why" ] || return $_frc
		# The kind without its figures ("startup timed out after 179.99…").
		_fk=$(printf '%s' "$_why" | tr -d '0-9.' | tr ' ' _)
		case $_fkinds:$_why in
		*" $_fk "*:"the VM kernel reset"* | *" $_fk "*:"$RESET"*) ;;
		*" $_fk "*)
			say "flaky: not retried: $_why, a second time"
			return $_frc
			;;
		esac
		if [ "$(echo $_fkinds | wc -w)" -ge 2 ]; then
			say "flaky: not retried: $_why, after two retries"
			return $_frc
		fi
		_fkinds="$_fkinds$_fk "
		echo "$_n:$_why" | tr ' ' _ >>"$DATA/retried"
		say "flaky: retried: $_why"
		if [ -n "$FLAKY_CLEANUP" ]; then eval "$FLAKY_CLEANUP"; else vm_back "$_why"; fi
	done
}

# vm_reset_since TIME: "the VM kernel reset …" when msb's system log of the
# session's VM ($VM, else the one msb has) says, at TIME (UTC, as date -u
# +%Y-%m-%dT%H:%M:%S) or later, "Received KVM_EXIT_SHUTDOWN": its kernel
# reset under emulated SVM, and the command that used it failed with it
# whatever it printed (an msb exec with a terminal ends with exit 255 and
# no word of why: CI run 20, during the agent's run). TIME "started": since
# the VM's last start (msb's "--- sandbox started ---"). Nothing otherwise.
vm_reset_since() {
	_rv=${VM:-$(timeout 30 msb ls -q 2>/dev/null | head -n 1)}
	[ -n "$_rv" ] || return 0
	timeout 60 msb logs "$_rv" --source system --tail 4000 --timestamps --no-color 2>/dev/null |
		awk -v t="$1" -v r="$RESET" -v s="$STARTED" '
			t == "started" { if (index($0, s)) seen = 0; else if (index($0, r)) seen = 1; next }
			index($0, r) && $1 >= t { seen = 1; exit }
			END { if (seen) print "the VM kernel reset (msb logged KVM_EXIT_SHUTDOWN)" }'
}

# vm_back KIND: after an msb failure of its own (KIND, flaky's name for it),
# the session's VM ($VM, else the one msb has) may have stopped with it:
# its kernel reset under emulated SVM (msb's system log says "Received
# KVM_EXIT_SHUTDOWN"; seen once, 2026-12-05, during a find over the whole
# VM). A user starts it again with asb, which hands msb the secrets; a bare
# msb exec would start it without them and fail ("host environment
# variable … is not set"). A VM msb still calls Running after an msb client
# never answered (KIND "msb did not return…": CI run 26, the first exec
# into the real image, one emulated CPU spinning for 25 minutes) is
# stopped first, as a user would end a VM that does not answer. One msb
# left draining (a graceful stop that never finished: ci60's restart for
# new secrets, and asb's own stop over its budget, runner.StopBudget) is
# killed: msb starts no VM that is still draining. Nothing when it runs
# after another kind of failure, and nothing when msb has no such VM: the
# session removed it on purpose (home:reset before the reap steps, which
# must find no VM; CI run 2026-12-05 13:04 made one here when a bare create
# of another VM was retried).
vm_back() {
	_vb=${VM:-$(timeout 30 msb ls -q 2>/dev/null | head -n 1)}
	[ -n "$_vb" ] || return 0
	_vs=$(timeout 60 msb status "$_vb" --format json 2>/dev/null) || return 0
	if printf '%s\n' "$_vs" | grep -q '"status": *"Draining"'; then
		vm_kill "$_vb" "$_vb is left draining"
	elif printf '%s\n' "$_vs" | grep -q '"status": *"Running"'; then
		case $1 in "msb did not return"* | "graceful stop of sandbox"*) ;; *) return 0 ;; esac
		say "flaky: $_vb did not answer: asb task vm:stop, then vm:start"
		echo "$_n:the_VM_did_not_answer" >>"$DATA/retried"
		# ci60: a VM restarted for its new secrets answered no exec, and
		# its stop never returned either (msb left it "draining"), so the
		# retry met the same dead VM. A user kills it then. The stop gets
		# 60 s, as asb's own (runner.StopBudget; a graceful stop takes 3 s
		# in the guest): ci91's real image VM, which answered no exec, not
		# even root's, had its stop wait the 300 s it had before.
		bounded 60 asb task vm:stop >&2 || vm_kill "$_vb" "$_vb did not stop"
	else
		say "flaky: $_vb is not running after that failure: asb task vm:start"
		echo "$_n:the_VM_stopped_by_itself" >>"$DATA/retried"
	fi
	bounded 300 asb task vm:start >&2
}

# vm_kill VM WHY: msb stop --force VM, as a user ends a VM whose graceful
# stop does not finish; said with WHY, and noted as the_VM_did_not_stop.
vm_kill() {
	say "flaky: $2: msb stop --force"
	echo "$_n:the_VM_did_not_stop" >>"$DATA/retried"
	timeout 120 msb stop --force --quiet "$1" >&2
}

# msb_clients ROOT: "PID COMMAND" of each msb command running under ROOT
# (guestlib.sh's runs_under and cmdline),
# the command a step waits on (a create, start, stop, exec or load; never
# the VMs' own msb processes; a stand-in msb may be a script run by sh).
# Only ROOT's: bounded kills them, and the lib's tests run it on a host
# where other tests' real msb commands run (a cold CI run's TestRealMSBLoad
# had its msb load killed by TestLibBoundedNamesTheHang). Only processes
# named msb or sh are read, each read bounded: reading a process's command
# line waits for its memory's lock, which a stuck VM process may hold for
# good (its name needs no lock).
msb_clients() {
	for _p in /proc/[0-9]*; do
		read -r _c 2>/dev/null <"$_p/comm" || continue
		case $_c in msb | sh) ;; *) continue ;; esac
		runs_under "${_p#/proc/}" "$1" || continue
		printf '%s ' "${_p#/proc/}"
		cmdline "${_p#/proc/}"
		echo
	done | grep -E '^[0-9]+ ([^ ]*sh )?([^ ]*/)?msb (create|start|stop|exec|load|remove|rm) ' | cut -c1-160
}

# vm_procs CMDLINE: what runs, as root, in the VM the hung msb client
# CMDLINE names (one msb has; else the session's, $VM), bounded: after an
# msb client hung, whether the VM's side of it still runs (its command
# waits) or ended (msb lost its end). Only in a VM msb calls Running: an
# exec into a stopped one would start it (without its secrets: a session
# rm's hung stop of its session's VM had this exec into the stopped
# folder VM, 2026-12-07), and a draining one answers nothing.
vm_procs() {
	_pv=
	for _v in $(timeout 30 msb ls -q 2>/dev/null); do
		case " $1 " in *" $_v "*) _pv=$_v ;; esac
	done
	_pv=${_pv:-$VM}
	[ -n "$_pv" ] || return 0
	if ! timeout 30 msb status "$_pv" --format json 2>/dev/null | grep -q '"status": *"Running"'; then
		echo "bounded: $_pv was not running then (msb status): nothing asked of it"
		return 0
	fi
	echo "bounded: in $_pv then (msb exec as root, each process's command line but the kernel's):"
	# shellcheck disable=SC2016
	timeout -s KILL 30 msb exec --no-tty -u root "$_pv" -- sh -c 'for p in /proc/[0-9]*; do
		c=$(tr "\0\n" "  " <"$p/cmdline" 2>/dev/null | cut -c1-160); [ -z "$c" ] || echo "  ${p#/proc/} $c"; done' 2>&1 | tail -n 60
}

# bounded LIMIT CMD…: CMD, ended after LIMIT seconds of the clock (exit
# 124), not LIMIT turns of its loop: under emulation a turn (a sleep 1, a
# fork) took well over a second, and a real_exec bounded at 900 ran 25
# minutes (CI run 26). Which side hung is said, for flaky: an msb client
# still running then (msb never answered) is "msb did not return within
# LIMIT s" and may be retried; none is asb's own hang, which stands. The
# shell waits for CMD itself, so CMD's end is seen at once (a poll each
# second added up to a second to every exec the speed steps compare).
bounded() {
	_lim=$1
	shift
	"$@" &
	_bp=$!
	bounded_watch "$_lim" $_bp &
	_bw=$!
	wait $_bp
	_brc=$?
	if [ -e "$DATA/.bounded.$_bp" ]; then
		wait $_bw 2>/dev/null # its kill of the clients, and its word
		rm -f "$DATA/.bounded.$_bp"
		return 124
	fi
	kill $_bw 2>/dev/null
	wait $_bw 2>/dev/null
	return $_brc
}

# bounded_watch LIMIT PID: bounded's clock. At LIMIT seconds it marks
# $DATA/.bounded.PID, ends PID and the msb clients under it, and says
# whose hang it was.
bounded_watch() {
	_b0=$(date +%s)
	while [ $(($(date +%s) - _b0)) -lt "$1" ]; do
		sleep 1
		kill -0 "$2" 2>/dev/null || return 0
	done
	: >"$DATA/.bounded.$2"
	# Read before the kill: a client whose parent ended is no longer
	# under PID.
	_bcl=$(msb_clients "$2")
	_hung=$(printf '%s\n' "$_bcl" | head -n 1)
	kill -TERM "$2" 2>/dev/null
	_bk=0
	while kill -0 "$2" 2>/dev/null && [ $_bk -lt 10 ]; do sleep 0.5; _bk=$((_bk + 1)); done
	kill -KILL "$2" 2>/dev/null
	_bpids=$(printf '%s\n' "$_bcl" | cut -d' ' -f1)
	for _c in $_bpids; do kill -KILL "$_c" 2>/dev/null; done
	# A client the kill did not end waits in the kernel (state D): say
	# where, for the emulation's faults are told from asb's by it.
	sleep 2
	for _c in $_bpids; do
		_w=$(waits "$_c")
		case $_w in Z* | gone) continue ;; esac
		say "bounded: msb client $_c outlived its kill: $_w"
	done
	if [ -n "$_hung" ]; then
		say "bounded: msb did not return within $1 s: $_hung"
		vm_procs "$_hung" >&2
	else
		echo "bounded: no answer within $1 s, and no msb command was running: the hang is not msb's" >&2
		live "bounded: no answer within $1 s, and no msb command was running"
	fi
}

# create NAME: asb task vm:create; a boot msb failed by itself is removed
# (msb rm --force, bounded as every msb call here is: flaky waits for it)
# and made once more.
create() {
	FLAKY_CLEANUP='for v in $(timeout -s KILL 60 msb ls -q); do timeout -s KILL "${RM_LIMIT:-120}" msb rm --force "$v" >/dev/null 2>&1 || say "msb rm --force $v: exit $?"; done'
	step "$1" flaky bounded "${CREATE_LIMIT:-300}" asb task vm:create
	_crc=$?
	FLAKY_CLEANUP=
	return $_crc
}
