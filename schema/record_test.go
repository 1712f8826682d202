package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A name an earlier asb took (1demo, x-) still reads: the folder's VMs and
// volumes carry it. Only a name no asb ever took is refused.
func TestReadRecordKeepsEarlierNames(t *testing.T) {
	for name, ok := range map[string]bool{"demo": true, "1demo": true, "x-": true, "-x": false, "Demo": false} {
		dir := t.TempDir()
		rec := "format: 1\nasb: dev\nagent: opencode\nagent_version: 1.18.33\nanswers:\n  agent: opencode\n  name: \"" + name +
			"\"\n  cpus: 2\n  memory: 4G\n  network: allow\n  base_image: debian:trixie-slim\nworkspace: {}\n"
		if err := os.WriteFile(filepath.Join(dir, RecordFile), []byte(rec), 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := ReadRecord(dir)
		switch {
		case ok && err != nil:
			t.Errorf("name %q: %v, want the record read", name, err)
		case ok && r.Answers.Name != name:
			t.Errorf("name %q read as %q", name, r.Answers.Name)
		case !ok && (err == nil || !strings.Contains(err.Error(), "name")):
			t.Errorf("name %q: %v, want it refused", name, err)
		}
	}
}
