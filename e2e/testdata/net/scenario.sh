# scenario.sh: one guest session of the real-boot network tests
# (net_real_test.go), in the nested guest only (the lab's servers bind
# addresses and the name server that msb forwards to: never on a real host).
# Runs after guestlib.sh (step, note, now) and lab.sh (lab_up). /data holds:
# bin/ (static asb, asb-task, ptyrun, netlab, the builder stand-in), msb/,
# image.tar (busybox with netlab and secret-probe), net/ (the lab: lab.json,
# ca.pem, addrs, presets, urls, checks, values), and one outer folder per
# network preset, outer-PRESET/.
#
# As root: the lab (lab_up, lab.sh), then the rest runs as uid 2000, as
# asb's users.
if [ "$(id -u)" = 0 ]; then
	[ "$GUEST_SHAPE" = nested ] || { note skip "the network lab runs in the nested guest only"; exit 0; }
	echo 'user:x:2000:2000:user:/data/root:/bin/sh' >>/etc/passwd
	echo 'user:x:2000:' >>/etc/group
	chmod 0666 /dev/kvm
	echo 0 >/proc/sys/kernel/dmesg_restrict # on_fail quotes the guest kernel
	mkdir -p "$DATA/root"
	lab_up
	chown -R 2000:2000 "$DATA"
	su -p -s /bin/sh user -c "sh $DATA/run.sh"
	kill %1 2>/dev/null
	exit 0
fi
export PATH="$DATA/bin:$DATA/msb/bin:$PATH" MSB_HOME="$DATA/msb-home" TMPDIR="$DATA/tmp" HOME="$DATA/root"
export ASB_BUILDER="$DATA/bin/builder"
mkdir -p "$MSB_HOME" "$TMPDIR" "$HOME"
# What flaky retried (lib.sh), for the tests to report.
trap 'note retried "$(cat "$DATA/retried" 2>/dev/null | tr "\n" " ")"' EXIT

# The probes run through msb exec, as dev in /workspace (asb task vm:exec
# does the same, through go-task and its checks: tens of seconds each under
# emulation; the real-boot tests cover it). An exec that msb failed by itself
# is run once more (flaky, lib.sh: CI run 24's vm_proc lost its VM, "exec
# session ended without exit event"), after asb task vm:start when the VM
# stopped with it; so is one msb never answered, which bounded names (ci53
# of 2026-12-06: an exec that takes 0.4-10 s waited out a plain timeout 180
# with no word of whose hang it was).
vmexec() { flaky bounded 180 msb exec --no-tty -u dev -w /workspace "$VM" -- "$@"; }
rootexec() { flaky bounded 180 msb exec --no-tty -u root "$VM" -- "$@"; }
# checks: asb network check for each target of the table, one line each:
# TARGET EXIT VERDICT.
checks() {
	while read -r c; do
		out=$(asb network check "$c" 2>&1)
		echo "$c $? $out"
	done <"$DATA/net/checks"
}
# The secrets' values, split so that no command line holds one whole.
pat=""
while read -r c; do
	[ -n "$c" ] && pat="$pat -e '${c%??????}''${c#"${c%??????}"}'"
done <"$DATA/net/values"

for p in $(cat "$DATA/net/presets"); do
	cd "$DATA/outer-$p" || exit 1
	step "${p}_trust" asb trust
	step "${p}_checks" checks
	create "${p}_create" || continue
	VM=$(msb ls -q | head -n1)
	note "${p}_vm" "$VM"
	step "${p}_env" vmexec env
	# shellcheck disable=SC2046 # one URL a line
	step "${p}_probe" vmexec netlab probe -t 20 $(cat "$DATA/net/urls")
	# Each secret to its host, then GITHUB_TOKEN's placeholder to the others.
	step "${p}_secret_gh" vmexec secret-probe GITHUB_TOKEN Authorization "https://api.github.com/secret/$p"
	step "${p}_secret_oc" vmexec secret-probe OPENCODE_API_KEY X-Api-Key "https://opencode.ai/secret/$p"
	step "${p}_secret_other" vmexec secret-probe GITHUB_TOKEN Authorization "https://opencode.ai/other/$p" \
		"https://denied.example.com/other/$p" "https://registry.npmjs.org/other/$p"
	if [ "$p" = allow ]; then
		# A new value in secrets.env reaches the running VM: a task that
		# attaches (vm:exec here, as agent and vm:shell) restarts the VM
		# first and says so; the probe then carries the new value. Here, on
		# busybox (a restart of seconds), not in the real image's session,
		# where a restart and OpenCode's start again cost minutes.
		cp "$DATA/net/secrets-rotated.env" secrets.env
		step allow_rotate flaky bounded 300 asb task vm:exec -- secret-probe OPENCODE_API_KEY X-Api-Key "https://opencode.ai/secret/rotated"
		step vm_fs rootexec sh -c "find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f -exec grep -lsF $pat {} + ; true"
		step vm_proc rootexec sh -c 'for d in /proc/[0-9]*; do tr "\0" "\n" <"$d/environ"; tr "\0" " " <"$d/cmdline"; echo; done 2>/dev/null; true'
	fi
	step "${p}_log" asb network log
	step "${p}_learn" asb network learn
	step "${p}_msblog" msb logs "$VM" --source system --json --grep microsandbox_network::
	step "${p}_rm" asb task vm:rm
done
step host_logs sh -c "grep -rlsF $pat '$MSB_HOME' '$TMPDIR'; true"
step requests cat "$DATA/net/run/requests.jsonl"
step dns_log grep -c dns "$DATA/net/run/serve.log"
