# How the VM starts Gemini CLI (asb task agent runs `sh /etc/gemini-cli/start.sh
# --yolo ARGS`).
#
# Gemini CLI reads system settings from /etc/gemini-cli/settings.json only when
# root owns that file and every folder above it, and msb shows a bound folder
# as owned by the VM's user (dev): Gemini would skip the file with a security
# warning (and, with folder trust on, turn --yolo off). So the settings are in
# gemini/, copied into ~/.gemini (the home volume) at each start. The files in
# gemini/ win: a change Gemini makes to one of them (settings.json, from
# /settings) lasts until the next start. Gemini's own files (projects.json,
# chats, logs), which are not in gemini/, are never touched. This script is
# read-only in the VM as well.
set -e
mkdir -p "$HOME/.gemini"
cp -R /etc/gemini-cli/gemini/. "$HOME/.gemini/"
exec gemini "$@"
