# steps_session.sh: a session (docs/sessions.md) against the real msb
# (TestRealBootSession). Sourced by scenario.sh with the folder's own VM
# stopped (memory for the session's) and the host repository .asb/git
# holding the VM's commit. The session's own VM and checkout: its agent, as
# dev, sees the base's last commit and commits on the session's branch,
# which session diff shows. Then it takes the commit back, leaves a file
# not committed and plants a FIFO named .gitignore, where the host's git
# would open it and wait: session rm stops the VM first and refuses, at
# once; --force removes VM, checkout and branch. Each command in the VM is
# written to run twice (flaky): a try msb lost may have stopped in the
# middle of git, whose lock files stay in the checkout (a run of
# 2026-12-07: "exec session ended without exit event" during the commit,
# then the retry's commit met HEAD.lock). The cleanup removes the
# session's VM before a retry (the retry's run creates it again), and each
# command removes them first (lib.sh's GIT_UNLOCK).
step sess_new asb session new s1
FLAKY_CLEANUP='timeout -s KILL 120 msb rm --force "$VM-s1" >/dev/null 2>&1'
step sess_agent flaky bounded 300 asb task --session s1 vm:exec -- sh -c 'set -e; cd /workspace; '"$GIT_UNLOCK"'
git log -1 --format=%s | grep -qx "from the session" || { echo "base: $(git log -1 --format=%s)"; echo s >s.txt; git add s.txt; git -c user.name=agent -c user.email=agent@vm commit -qm "from the session"; }'
step sess_diff asb session diff --stat s1
step sess_plant flaky bounded 300 asb task --session s1 vm:exec -- sh -c 'set -e; cd /workspace; '"$GIT_UNLOCK"'
git log -1 --format=%s | grep -qx "from the session" && git reset -q --hard HEAD~1
echo u >u.txt; [ -e .gitignore ] || mkfifo .gitignore
echo "in the VM: $(stat -c %F .gitignore)"'
FLAKY_CLEANUP=
step sess_host stat -c '%F' .asb/sessions/s1/workspace/.gitignore
# session rm's stop of the VM is msb's graceful stop within asb's budget
# (runner.StopBudget): one msb did not finish (its VM left draining: a run
# of 2026-12-07, before the budget, waited until bounded's limit) is
# msb's, named by its message, and tried again on the session's VM killed
# and started again, running as before.
FLAKY_CLEANUP='timeout -s KILL 120 msb stop --force --quiet "$VM-s1" >&2; bounded 300 asb task --session s1 vm:start >&2'
expect_fail sess_rm flaky bounded 120 asb session rm s1
FLAKY_CLEANUP=
step sess_stopped msb status "$VM-s1" --format json
step sess_rm_force asb session rm --force s1
step sess_gone sh -c 'echo "vms: $(msb ls -q | tr "\n" " ")"; echo "sessions: $(ls -A .asb/sessions 2>/dev/null | tr "\n" " ")"; echo "canary: $(cat "$DATA/canary-ran" 2>/dev/null)"'
