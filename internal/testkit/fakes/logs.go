package fakes

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"time"
)

// LogsEnv names a file of `msb logs --json` lines (msb 0.7.2's format: one
// JSON object per line with keys d, e, id, s, t) that the stand-in's `msb
// logs VM` prints as the VM's log; unset, it prints "fake log line".
const LogsEnv = "ASB_FAKE_MSB_LOGS"

// msbLogs is `msb logs VM [--json] [--source S] [--since RFC3339] [--grep RE]`:
// the VM must exist; the lines of $ASB_FAKE_MSB_LOGS are filtered by source
// (stdout,stderr by default, as msb's), time and body, and printed as JSON
// lines with --json, else their bodies.
func (e *env) msbLogs(args []string) error {
	fl, pos, _ := flags(args, "--tail", "--since", "--until", "--source", "--grep")
	if len(pos) != 1 || !e.exists("msb-vms", pos[0]) {
		return fail("error: sandbox not found")
	}
	file := os.Getenv(LogsEnv)
	if file == "" {
		_, err := fmt.Fprintln(e.stdout, "fake log line")
		return err
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	keep, err := logFilter(last(fl["--source"]), last(fl["--since"]), last(fl["--grep"]))
	if err != nil {
		return err
	}
	_, asJSON := fl["--json"]
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var entry struct{ D, S, T string }
		if json.Unmarshal(sc.Bytes(), &entry) != nil || !keep(entry.S, entry.T, entry.D) {
			continue
		}
		out := sc.Text() + "\n"
		if !asJSON {
			out = entry.D
		}
		if _, err := fmt.Fprint(e.stdout, out); err != nil {
			return err
		}
	}
	return sc.Err()
}

func logFilter(source, since, grep string) (func(s, t, d string) bool, error) {
	sources := map[string]bool{"stdout": true, "stderr": true}
	switch source {
	case "":
	case "all":
		sources = nil
	default:
		sources = map[string]bool{}
		for _, s := range bytes.Split([]byte(source), []byte(",")) {
			sources[string(s)] = true
		}
	}
	var from time.Time
	if since != "" {
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			return nil, exitError{1, fmt.Sprintf("error: could not parse time %q (expected RFC 3339 or `5m` etc.)", since)}
		}
		from = t
	}
	var re *regexp.Regexp
	if grep != "" {
		var err error
		if re, err = regexp.Compile(grep); err != nil {
			return nil, exitError{2, "error: invalid --grep: " + err.Error()}
		}
	}
	return func(s, t, d string) bool {
		if sources != nil && !sources[s] {
			return false
		}
		if tm, err := time.Parse(time.RFC3339Nano, t); err == nil && tm.Before(from) {
			return false
		}
		return re == nil || re.MatchString(d)
	}, nil
}
