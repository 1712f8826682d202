# scenario.sh: one guest session of the real-boot tests (boot_real_test.go).
# Runs on a host that can boot microVMs (the nested guest, or this one),
# after guestlib.sh (step, note, now) and prelude.sh (the user, the PATH,
# create). /data holds: bin/ (static asb, asb-task, ptyrun, the builder
# stand-in), msb/, image.tar, outer/ (the folder asb generated, canaries in
# place) and canaries (one a line).
cd "$DATA/outer" || exit 1
note ws_owner "$(stat -c '%u %g' workspace)"
# Mount forms (boot_mounts_real_test.go): the folder outside the outer
# folder depends on where /data is, so it is made here; each bind's folder
# holds its own resolved path, for the VM to read back. linked is a link
# for TestRealBootLinkBind (asb trusts a top-level link to a folder inside).
sed -i "s|@DATA@|$DATA|g" sandbox.yaml
mkdir -p d1 d2 d3 real/sub "$DATA/outside-x"
ln -s real linked
for d in d1 d2 d3 "$DATA/outside-x"; do (cd "$d" && pwd -P >.mark); done
# The test swapped the toolchain for a small image: the folder is no longer
# asb's own render, so its user approves it, as asb task asks.
step trust asb trust

# Each exec is bounded: one msb never answered is named and retried by
# flaky (lib.sh); CI of eb148e5 waited 55 minutes on an unbounded one.
vmexec() { flaky bounded 300 asb task vm:exec -- "$@"; }
rootexec() { flaky bounded 300 msb exec --no-tty -u root "$VM" -- "$@"; }

step doctor asb doctor --boot
step volume msb volume create --quiet extra-vol
create create || exit 1
VM=$(msb ls -q | head -n1)
note vm "$VM"

# Item 3: the boundary, observed from inside.
step home_owner rootexec stat -c '%n %U' /home/dev /home/dev/.config /home/dev/.config/opencode
step whoami vmexec sh -c 'echo "$(id -un) $(id -u) $(pwd)"; grep "^dev:" /etc/passwd'
step ws_write vmexec sh -c 'echo from-vm >/workspace/from-vm && chmod 0640 /workspace/from-vm && mkdir /workspace/dir-vm && chmod 0750 /workspace/dir-vm && echo "echo ran" >/workspace/run.sh && chmod 0755 /workspace/run.sh && echo kept >/home/dev/keep'
step ws_stat stat -c '%n %u %g %a' workspace workspace/from-vm workspace/dir-vm workspace/run.sh
step ws_vm_stat rootexec stat -c '%n %u %g %a' /workspace/from-vm /workspace/dir-vm /workspace/run.sh
expect_fail cfg_write vmexec touch /home/dev/.config/opencode/vm-wrote
step cfg_host ls -A opencode
. "$DATA/steps/steps_modes.sh"

# The agent's own git, against the host (docs/vm-repositories.md,
# boot_vmrepo_real_test.go): as dev in the VM it commits, then plants a
# hook, a core.fsmonitor, a clean filter (its committed .gitattributes
# selects it) and a URL rewrite with an ssh command, each naming a program
# of the host, and changes a file. The host brings the commit in as the
# README says; the program never runs. A retry (flaky) commits once
# (GIT_UNLOCK: what a lost try left).
step host_fetch_before asb fetch
step vm_git vmexec sh -c "set -e; cd /workspace; $GIT_UNLOCK; echo '* filter=x' >.gitattributes; echo 'from the vm' >vm.txt
git log -1 --format=%s | grep -qx 'from the vm' || { git add .gitattributes vm.txt; git -c user.name=agent -c user.email=agent@vm commit -qm 'from the vm'; }
c=$DATA/canary.sh; git config core.fsmonitor \$c; git config filter.x.clean \$c; git config filter.x.smudge \$c
git config url.ssh://evil.invalid/x.insteadOf /; git config core.sshCommand \$c
for h in post-checkout reference-transaction post-index-change; do printf '#!/bin/sh\n%s hook\n' \$c >.git/hooks/\$h; chmod +x .git/hooks/\$h; done
echo changed >>vm.txt; git log -1 --format=%s"
step host_fetch asb fetch
step user_fetch sh -c 'git init -q "$DATA/mine" && git -C "$DATA/mine" remote add asb "$DATA/outer/.asb/git" && git -C "$DATA/mine" fetch -q asb && git -C "$DATA/mine" log -1 --format=%s asb/workspace/main'
step host_canary sh -c 'cat "$DATA/canary-ran" 2>/dev/null; echo end'
# The canaries, split so that no command line holds one whole; a control
# value in workspace/ shows the search finds what is there.
pat=""
while read -r c; do
	[ -n "$c" ] && pat="$pat -e '${c%??????}''${c#"${c%??????}"}'"
done <"$DATA/canaries"
step canary_fs rootexec sh -c "find / \\( -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f -exec grep -lsF $pat {} + ; true"
step env_root rootexec sh -c 'for f in /proc/[0-9]*/environ; do tr "\0" "\n" <"$f" 2>/dev/null; done; true'
step env_dev vmexec env
step disk rootexec sh -c 'df -k /var/lib/containers; d=$(awk "\$2==\"/var/lib/containers\" {print \$1}" /proc/mounts); echo "dev=$d"; echo "bytes=$(( $(cat /sys/class/block/${d#/dev/}/size) * 512 ))"'
step mounts_boundary asb boundary --format json
# shellcheck disable=SC2016,SC2046
step mounts_vm rootexec sh -c 'for m in "$@"; do
	w=$( (echo vm >"$m/.vm-wrote") 2>&1) && w=ok || w="refused $w"
	echo "$m|$(cat "$m/.mark" 2>/dev/null)|$w|$(awk -v m="$m" "\$2==m {print \$3}" /proc/mounts)"
done' sh $(cat "$DATA/mount-targets")
# shellcheck disable=SC2016
step mounts_host sh -c 'for d in d1 d2 d3 "$DATA/outside-x"; do
	echo "$(cd "$d" && pwd -P) $(cat "$d/.vm-wrote" 2>/dev/null)"
done; find "$MSB_HOME" -name .vm-wrote 2>/dev/null'
# msb itself does not follow a link on a bind's path (schema.BindLink).
printf 'mounts:\n  - bind: %s\n    target: /x\n' "$DATA/outer/linked/sub" >"$DATA/link.yaml"
link_msb() { expect_fail link_msb timeout 300 msb create "$(msb image ls -q | head -n1)" --name linktest --pull never --conf "$DATA/link.yaml"; msb rm --force linktest >/dev/null 2>&1; }
link_msb
grep -q 'symbolic links' "$DATA/.step.out" "$DATA/.step.err" || link_msb # a boot that failed otherwise (a few %)
# Nor does it start a VM with a .. in a bind's path (schema.BindDotDot).
printf 'mounts:\n  - bind: %s/outer/d1/../d2\n    target: /x\n' "$DATA" >"$DATA/dotdot.yaml"
dotdot_msb() { expect_fail dotdot_msb timeout 300 msb create "$(msb image ls -q | head -n1)" --name dotdottest --pull never --conf "$DATA/dotdot.yaml"; msb rm --force dotdottest >/dev/null 2>&1; }
dotdot_msb
grep -q 'Invalid argument' "$DATA/.step.out" "$DATA/.step.err" || dotdot_msb

# Item 2: the agent, attached with a terminal (the image's opencode is a
# stand-in that prints who and where it runs), then warm.
step agent timeout 120 ptyrun asb task agent
step warm_record ls .asb/warm
step agent_warm timeout 120 ptyrun asb task agent
# Item 5: the same actions, asb against bare msb, in this guest, on the VM
# the warm agent just attached to. The creates compared are create2 (asb's,
# the image loaded and the home made; below) and the bare one further down
# (the Taskfile's own msb create line).
# Each warm: the first run of a task records its warm path, unmeasured.
vmexec true >/dev/null 2>&1
# Both sides bounded alike (vmexec is), so the harness costs each the same.
for i in 1 2 3 4 5; do step "x_asb_exec$i" vmexec true; step "x_msb_exec$i" flaky bounded 300 msb exec --no-tty -u dev -w /workspace "$VM" -- true; done
# Unmeasured, and bounded: in ci72 a trust prompt held this line until the
# guest watchdog ended the whole session 6 min later.
bounded 180 ptyrun asb task agent >/dev/null 2>&1
for i in 1 2 3 4 5; do step "x_asb_agent$i" flaky ptyrun asb task agent; step "x_msb_agent$i" flaky ptyrun msb exec -t -u dev -w /workspace "$VM" -- opencode; done
# The speed steps end with the VM stopped behind asb's back and started
# again by asb's engine (its vm:start task: speed_calls_stopped), which is
# this session's restart: the home kept its file.
. "$DATA/steps/steps_speed.sh"
step home_after_start rootexec cat /home/dev/keep
# msb's graceful stop over its budget (0 s: msb sends nothing, kills
# nothing): the words asb quotes from it (runner.StopBudget) and flaky
# names, from the real msb; the VM runs on.
expect_fail stop_budget msb stop --quiet --timeout 0 "$VM"
step stop_budget_left msb status "$VM" --format json
step stop asb task vm:stop
step status_stopped msb status "$VM" --format json
. "$DATA/steps/steps_session.sh"
step rm asb task vm:rm
create create2
step home_after_rm rootexec cat /home/dev/keep
# home:reset removes the VM and its home; the next VM (reap_next's, below:
# each boot is minutes of the session) starts with an empty home.
step reset asb task --yes home:reset
IMG=$(msb image ls -q | head -n1)
msb volume create --quiet bare-home
bare_create() {
	set -a; . ./secrets.env; set +a
	bounded 300 msb create "$IMG" --name bare --replace --pull never --log-level debug \
		--conf sandbox.yaml --secret-conf secrets.yaml --mount-named bare-home:/home/dev \
		--mount-owned /var/lib/containers:kind=disk,size=8G
}
step x_msb_create flaky bare_create
step x_msb_rm msb rm --force bare

# Item 4: Ctrl-C and kill -9 against a boot that is really booting. asb
# runs in a session of its own, as a terminal's foreground job; the signal
# comes once msb's machine process runs (the boot then takes seconds here).
machines() { ps -o pid,args | grep '[m]sb machine'; }
boot_and() {
	setsid asb task "$2" >"$DATA/.bg.out" 2>&1 </dev/null &
	p=$!
	i=0
	while [ -z "$(machines)" ] && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
	echo "machine after $((i / 10)) s: $(machines | wc -l) process(es)"
	if [ "$1" = INT ]; then kill -INT "-$p"; else kill -KILL "$p"; fi
	i=0
	while kill -0 "$p" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
	wait "$p"
	echo "asb exit $?"
	cat "$DATA/.bg.out"
}
step reap_int boot_and INT vm:create
left() { sleep 2; echo "machines: $(machines | wc -l)"; echo "vms: $(msb ls -q | tr '\n' ' ')"; }
step reap_int_left left
step reap_kill boot_and KILL agent
step reap_next flaky bounded 300 ptyrun asb task agent
step reap_next_left left
expect_fail home_after_reset rootexec ls /home/dev/keep
step cleanup asb task vm:rm

