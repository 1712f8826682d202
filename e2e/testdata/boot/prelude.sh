# prelude.sh: the start of every real-boot guest session (boot_real_test.go
# puts it before scenario.sh or realimage.sh), after guestlib.sh.
# In the nested guest the scenario runs as an ordinary user, uid 2000, who
# owns the outer folder and may use /dev/kvm, as asb's users do; root only
# prepares that. (On a host that boots by itself it runs as the test does.)
if [ "$GUEST_SHAPE" = nested ] && [ "$(id -u)" = 0 ]; then
	echo 'user:x:2000:2000:user:/data/root:/bin/sh' >>/etc/passwd
	echo 'user:x:2000:' >>/etc/group
	chmod 0666 /dev/kvm
	echo 0 >/proc/sys/kernel/dmesg_restrict # on_fail quotes the guest kernel
	# git, for asb and the user, where the scenario brought one (its
	# libraries too; the initramfs keeps its own where it has them).
	if [ -d "$DATA/git/root" ]; then
		for f in $(cd "$DATA/git/root" && find . ! -type d); do
			[ -e "/$f" ] || { mkdir -p "$(dirname "/$f")" && cp -a "$DATA/git/root/$f" "/$f"; }
		done
	fi
	mkdir -p "$DATA/root"
	chown -R 2000:2000 "$DATA"
	note svm "$(grep -c -w svm /proc/cpuinfo)"
	note kvm "$(ls -l /dev/kvm 2>&1)"
	note clock "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>&1)"
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
trap 'note retried "$(cat "$DATA/retried" 2>/dev/null | tr "\n" " ")"' EXIT
