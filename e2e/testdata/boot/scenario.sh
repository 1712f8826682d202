# scenario.sh: one guest session of the real-boot tests (boot_real_test.go).
# Runs on a host that can boot microVMs (the nested guest, or this one), as
# root, after guestLib (step, note, now). /data holds: bin/ (static asb,
# asb-task, ptyrun, the builder stand-in), msb/, image.tar, outer/ (the
# folder asb generated, canaries in place) and canaries (one a line).
# In the nested guest the scenario runs as an ordinary user, uid 2000, who
# owns the outer folder and may use /dev/kvm, as asb's users do; root only
# prepares that. (On a host that boots by itself it runs as the test does.)
if [ "$GUEST_SHAPE" = nested ] && [ "$(id -u)" = 0 ]; then
	echo 'user:x:2000:2000:user:/data/root:/bin/sh' >>/etc/passwd
	echo 'user:x:2000:' >>/etc/group
	chmod 0666 /dev/kvm
	mkdir -p "$DATA/root"
	chown -R 2000:2000 "$DATA"
	note svm "$(grep -c -w svm /proc/cpuinfo)"
	note kvm "$(ls -l /dev/kvm 2>&1)"
	exec su -p -s /bin/sh user -c "sh $DATA/run.sh"
fi
note user "$(id -u)"
export PATH="$DATA/bin:$DATA/msb/bin:$PATH" MSB_HOME="$DATA/msb-home" TMPDIR="$DATA/tmp" HOME="$DATA/root"
# image:build and image:load run through this stand-in: the image was built
# by the real podman on the test's host and saved to image.tar.
export ASB_BUILDER="$DATA/bin/builder"
mkdir -p "$MSB_HOME" "$TMPDIR" "$HOME"
cd "$DATA/outer" || exit 1
note ws_owner "$(stat -c '%u %g' workspace)"
# The test swapped the toolchain for a small image: the folder is no longer
# asb's own render, so its user approves it, as asb task asks.
step trust asb trust

# create NAME: asb task vm:create, retried once after msb rm --force (a
# few % of nested boots fail).
create() {
	step "$1" timeout 300 asb task vm:create && return 0
	note retry "$1"
	for v in $(msb ls -q); do msb rm --force "$v" >/dev/null 2>&1; done
	step "$1" timeout 300 asb task vm:create
}
vmexec() { asb task vm:exec -- "$@"; }
rootexec() { msb exec --no-tty -u root "$VM" -- "$@"; }

step doctor asb doctor --boot
create create || exit 1
VM=$(msb ls -q | head -n1)
note vm "$VM"

# Item 3: the boundary, observed from inside.
step whoami vmexec sh -c 'echo "$(id -un) $(id -u) $(pwd)"; grep "^dev:" /etc/passwd'
step ws_write vmexec sh -c 'echo from-vm >/workspace/from-vm && chmod 0640 /workspace/from-vm && mkdir /workspace/dir-vm && chmod 0750 /workspace/dir-vm && echo "echo ran" >/workspace/run.sh && chmod 0755 /workspace/run.sh && echo kept >/home/dev/keep'
step ws_stat stat -c '%n %u %g %a' workspace workspace/from-vm workspace/dir-vm workspace/run.sh
step ws_vm_stat rootexec stat -c '%n %u %g %a' /workspace/from-vm /workspace/dir-vm /workspace/run.sh
step cfg_write vmexec touch /home/dev/.config/opencode/vm-wrote
step cfg_host ls -A opencode
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

# Item 2: the agent, attached with a terminal (the image's opencode is a
# stand-in that prints who and where it runs), then warm.
step agent timeout 120 ptyrun asb task agent
step warm_record ls .asb/warm
step agent_warm timeout 120 ptyrun asb task agent
step stop asb task vm:stop
step status_stopped msb status "$VM" --format json
step start timeout 300 asb task vm:start
step home_after_start rootexec cat /home/dev/keep
step rm asb task vm:rm
create create2
step home_after_rm rootexec cat /home/dev/keep
step reset asb task --yes home:reset
create create3
step home_after_reset rootexec ls /home/dev/keep

# Item 5: the same actions, asb against bare msb, in this guest. create3
# is asb's create with the image loaded and the home made; the bare create
# is the Taskfile's own msb create line.
for i in 1 2 3; do step "x_asb_exec$i" vmexec true; step "x_msb_exec$i" msb exec --no-tty -u dev -w /workspace "$VM" -- true; done
ptyrun asb task agent >/dev/null 2>&1 # records the warm path for this VM
for i in 1 2 3; do step "x_asb_agent$i" ptyrun asb task agent; step "x_msb_agent$i" ptyrun msb exec -t -u dev -w /workspace "$VM" -- opencode; done
step x_asb_rm asb task vm:rm
IMG=$(msb image ls -q | head -n1)
msb volume create --quiet bare-home
bare_create() {
	set -a; . ./secrets.env; set +a
	timeout 300 msb create "$IMG" --name bare --replace --pull never --log-level debug \
		--conf sandbox.yaml --secret-conf secrets.yaml --mount-named bare-home:/home/dev \
		--mount-owned /var/lib/containers:kind=disk,size=8G
}
step x_msb_create bare_create
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
step reap_next timeout 300 ptyrun asb task agent
step reap_next_left left
step cleanup asb task vm:rm
