# How the VM starts pi (asb task agent runs `sh /etc/pi/start.sh ARGS`).
#
# pi reads its settings only from ~/.pi/agent, and writes there too (auth.json,
# sessions/, a lock beside settings.json): a read-only ~/.pi/agent crashes it.
# So this folder is mounted read-only at /etc/pi, and what agent/ holds is
# copied into ~/.pi/agent (the home volume) at each start. The files in agent/
# win: a change pi makes to one of them (settings.json, from /settings or
# /model) lasts until the next start. pi's own files (auth.json, sessions/,
# bin/), which are not in agent/, are never touched. This script is read-only
# in the VM as well.
set -e
mkdir -p "$HOME/.pi/agent"
cp -R /etc/pi/agent/. "$HOME/.pi/agent/"
exec pi "$@"
