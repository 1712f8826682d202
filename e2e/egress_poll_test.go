package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A create msb's own database refused (testenv.MSBRecordRace) is made once
// more, and the record of the second is returned; a create that ended
// otherwise without a record, or refused twice, is an error that quotes
// what it said. The stand-in msb fails its creates as $DATA/fail says, one
// word a create, and a create after the first without --replace as msb
// did in ci7 of 2026-12-06 ("sandbox already exists": what the refused
// create left); its inspect answers once a create is in flight.
func TestStartAndPollRetriesOnlyMSBsRecordRace(t *testing.T) {
	msb := `case "$1" in
create) n=$(($(cat "$DATA/n" 2>/dev/null || echo 0) + 1)); echo $n >"$DATA/n"
	[ $n = 1 ] || case " $* " in *" --replace "*) ;; *) echo "error: sandbox already exists: sandbox 'vm' already exists" >&2; exit 1 ;; esac
	case $(sed -n "${n}p" "$DATA/fail") in
	race) echo 'error: failed to start "vm"' >&2; echo '  → config: insert run: Query Error: error returned from database: (code: 787) FOREIGN KEY constraint failed' >&2; exit 1 ;;
	other) echo 'error: something else' >&2; exit 1 ;;
	esac
	: >"$DATA/flight"; exec sleep 30 ;;
inspect) [ -e "$DATA/flight" ] || { echo "error: sandbox not found: $2" >&2; exit 1; }; echo '{"status": "Starting"}' ;;
remove) echo "$*" >>"$DATA/removed" ;;
esac
`
	for _, c := range []struct {
		fail, want string
		creates    int
	}{
		{"race\nok\n", `{"status": "Starting"}`, 2},
		{"other\n", "something else", 1},
		{"race\nrace\n", "FOREIGN KEY constraint failed", 2},
	} {
		data := t.TempDir()
		bin := filepath.Join(data, "msb")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"+msb), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(data, "fail"), []byte(c.fail), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		env := append(os.Environ(), "DATA="+data)
		p, raw, err := startAndPoll(t, ctx, data, env, bin, "vm", []string{bin, "create", "img", "--name", "vm"})
		got := string(raw)
		if err != nil {
			got = err.Error()
		}
		if p != nil {
			_ = p.Kill()
		}
		cancel()
		n, _ := os.ReadFile(filepath.Join(data, "n"))
		if !strings.Contains(got, c.want) || strings.TrimSpace(string(n)) != strconv.Itoa(c.creates) {
			t.Errorf("creates failing as %q: got %q after %s creates; want %q after %d", c.fail, got, strings.TrimSpace(string(n)), c.want, c.creates)
		}
	}
}
