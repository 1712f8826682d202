# steps_modes.sh: modes made in the VM, seen on the host (issue 38, item 4;
# TestRealBootModes). Sourced by scenario.sh once the VM runs: sandbox.yaml
# mounts workspace/ with host_permissions: mirror. A file made under the
# VM's usual umask (022) with no chmod, a script made executable, a file
# and a folder with group access only.
step modes_write vmexec sh -c 'cd /workspace && umask 022 &&
	echo data >plain.txt &&
	printf "#!/bin/sh\necho ran\n" >tool.sh && chmod 0755 tool.sh &&
	echo group >grp.txt && chmod 0640 grp.txt &&
	mkdir team && chmod 0750 team &&
	echo later >plain-later.txt && chmod 0600 plain-later.txt && chmod 0644 plain-later.txt'
step modes_host stat -c '%n %a' workspace/plain.txt workspace/tool.sh workspace/grp.txt workspace/team workspace/plain-later.txt
step modes_vm rootexec stat -c '%n %a' /workspace/plain.txt /workspace/tool.sh /workspace/grp.txt /workspace/team /workspace/plain-later.txt
