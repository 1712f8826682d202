package fakes

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// RaceMSB is a stand-in msb (a shell script) for the tests of a create
// msb's own database refuses: its creates fail as the words of fails say,
// one a create: "race" ends it as msb does when its database refused the
// VM's record (FOREIGN KEY constraint failed), "other" with another error,
// any other word makes a create that stays in flight, its record
// inspectable (Starting), until Ctrl-C (exit 130, as asb's). With replace,
// a create after the first must say --replace, as msb answered "sandbox
// already exists" after a refused create (ci7 of 2026-12-06). `msb remove`
// is recorded and does nothing else.
type RaceMSB struct {
	Bin string   // the stand-in
	Env []string // what it reads (its data folder)
	dir string
}

const raceMSB = `#!/bin/sh
case "$1" in
create) n=$(($(cat "$DATA/n" 2>/dev/null || echo 0) + 1)); echo $n >"$DATA/n"
	if [ -e "$DATA/replace" ] && [ $n != 1 ]; then
		case " $* " in *" --replace "*) ;; *) echo "error: sandbox already exists: sandbox '$2' already exists" >&2; exit 1 ;; esac
	fi
	case $(sed -n "${n}p" "$DATA/fail") in
	race) echo 'error: failed to start sandbox' >&2; echo '  → config: insert run: Query Error: error returned from database: (code: 787) FOREIGN KEY constraint failed' >&2; exit 1 ;;
	other) echo 'error: something else' >&2; exit 1 ;;
	esac
	trap 'rm -f "$DATA/flight"; exit 130' INT
	: >"$DATA/flight"; sleep 30 & wait ;;
inspect) [ -e "$DATA/flight" ] || { echo "error: sandbox not found: $2" >&2; exit 1; }; echo '{"status": "Starting"}' ;;
remove) echo "$*" >>"$DATA/removed" ;;
esac
`

// NewRaceMSB writes the stand-in into dir.
func NewRaceMSB(dir string, fails []string, replace bool) (*RaceMSB, error) {
	m := &RaceMSB{Bin: filepath.Join(dir, "msb"), Env: append(os.Environ(), "DATA="+dir), dir: dir}
	if err := os.WriteFile(m.Bin, []byte(raceMSB), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "fail"), []byte(strings.Join(fails, "\n")+"\n"), 0o644); err != nil {
		return nil, err
	}
	if replace {
		if err := os.WriteFile(filepath.Join(dir, "replace"), nil, 0o644); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Creates is how many creates the stand-in saw.
func (m *RaceMSB) Creates() int {
	raw, _ := os.ReadFile(filepath.Join(m.dir, "n"))
	n, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	return n
}

// Removes is how many times it was asked to remove a VM.
func (m *RaceMSB) Removes() int {
	raw, _ := os.ReadFile(filepath.Join(m.dir, "removed"))
	return strings.Count(string(raw), "\n")
}
