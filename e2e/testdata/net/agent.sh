# agent.sh: the real agent end to end (net_real_agent_test.go), sourced by
# realimage.sh in the nested guest once the real image's VM has run (the
# lab is up: lab.sh, with the scripted model on https://opencode.ai/zen/v1).
# As the user, in the folder asb init wrote for OpenCode:
# - the agent's config points OpenCode's own provider at the lab's model
#   (opencode/opencode.json, read-only in the VM), approved with asb trust;
# - Node.js and Bun fetch https://opencode.ai/ through msb's interception,
#   with the key's placeholder (the real value arrives);
# - asb task agent -- run --auto PROMPT, with a terminal as a user's, in the
#   VM already running: the model's script has OpenCode write
#   workspace/hello.txt (one agent run: each takes minutes under emulation;
#   a change of secrets.env, which restarts the VM, is the network
#   session's: net/scenario.sh, allow_rotate);
# - no secret value in msb's files on this host, TMPDIR, or workspace/.
# net/sandbox.yaml, when present (ASB_NET_DEMO=break), replaces the
# folder's: opencode.ai in no allow list, and the test must say so.

# The secrets' values, split so that no command line holds one whole.
pat=""
while read -r c; do
	[ -n "$c" ] && pat="$pat -e '${c%??????}''${c#"${c%??????}"}'"
done <"$DATA/net/values"

cp "$DATA/net/opencode.json" opencode/opencode.json
[ -f "$DATA/net/sandbox.yaml" ] && cp "$DATA/net/sandbox.yaml" sandbox.yaml
step agent_trust asb trust
cp "$DATA/net/tls.sh" workspace/.tls.sh
# 12-71 s in some fifty runs to 2026-12-07; ci91's VM answered no exec, and
# the create's 600 s bound, then a stop's 300 s, went to waiting on it.
EXEC_LIMIT=180
vmexec agent_tls sh .tls.sh
EXEC_LIMIT=
rm -f workspace/.tls.sh
note agent_requests_before "$(wc -l <"$DATA/net/run/requests.jsonl")"
# With a terminal, as a user's; once more when msb failed by itself.
# Plain timeout, not bounded: the agent still running at the limit is a slow
# agent (emulation on a loaded host), not an msb client that never answered.
# AGENT_LIMIT a try: passing runs took 114-231 s (fifteen fresh-clone runs of
# 2026-12-06, a retry included); a try at the limit is ended as a closed
# terminal would end it (ptyrun hangs up, then kills what is left), and the
# step fails with on_fail's logs (OpenCode's own among them). Before, a try
# had 900 s and the step 2700 s (CI run ci14: the step beat for 44 minutes
# and the test binary's deadline took the network session's tests with it).
AGENT_LIMIT=480
# The deliberate break (net/sandbox.yaml: the model's host not allowed) is
# there to show OpenCode's own failure, which it prints only once it gives
# up on the model: 510 s of retries on a loaded host (docs/testing.md).
[ -f "$DATA/net/sandbox.yaml" ] && AGENT_LIMIT=900
agent_try() {
	_at=$(date +%s)
	timeout -k 30 "$AGENT_LIMIT" ptyrun asb task agent -- run --auto "create hello.txt"
	_ar=$?
	[ $_ar = 0 ] || echo "agent_run: this try ended with exit $_ar after $(($(date +%s) - _at)) s (its limit: $AGENT_LIMIT s)" >&2
	return $_ar
}
# Three tries at most and a restart of the VM between each two (flaky,
# lib.sh), and no more.
_limit=$STEP_LIMIT
STEP_LIMIT=$((3 * AGENT_LIMIT + 720))
step agent_run flaky agent_try
STEP_LIMIT=$_limit
step agent_file cat workspace/hello.txt
# OpenCode's own log of that run (its home volume, on this host), and what
# msb and the VM's kernel said: where the run's minutes went, and why it
# ended as it did.
step agent_own_log sh -c 'f=$(find "$MSB_HOME/volumes" -path "*/.local/share/opencode/log/*" -type f | sort | tail -n 1); echo "$f"; cat "$f"'
step agent_vm_log sh -c 'msb logs "$(msb ls -q | head -n 1)" --source system --tail 4000 --timestamps --no-color | grep -v -E "[[:space:]]DEBUG[[:space:]]" | tail -n 60'
step agent_log asb network log
step agent_requests cat "$DATA/net/run/requests.jsonl"
step agent_model cat "$DATA/net/run/model.json"
# Files under 20 MB: msb's database and logs, the home volume's (OpenCode's
# own logs and storage), not the image's layers or the VM's disk images.
# A copy of secrets.env under TMPDIR is the control: a search that does not
# find it could not have found a value anywhere (busybox's find once refused
# -size -20M, and the step passed with nothing searched).
ctl="$TMPDIR/asb-control-$$"
step agent_no_value sh -c "set -e; mkdir -p '$ctl'; cp secrets.env '$ctl/secrets'
find '$MSB_HOME' '$TMPDIR' workspace -type f -size -20480k >'$ctl.files'
echo \"searched \$(wc -l <'$ctl.files') files\" >&2
tr '\\n' '\\0' <'$ctl.files' | xargs -0 grep -lsF $pat >'$ctl.hits' || true
grep -qxF '$ctl/secrets' '$ctl.hits' || { echo 'the search missed its control file: it could not find a value' >&2; exit 3; }
rm -rf '$ctl' '$ctl.files'; grep -vxF '$ctl/secrets' '$ctl.hits' || true; rm -f '$ctl.hits'"
