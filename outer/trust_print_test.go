package outer

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/runner"
)

// On a machine without git (a minimal one, or the nested guest of the
// real-boot tests) a file that differs from asb's render is named with its
// sizes and the reason there is no diff, in words: not git's whole command
// line and Go's lookup error.
func TestPrintFilesWithoutGitSaysSo(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	v := &Verdict{
		Dir:    t.TempDir(),
		Set:    &TrustSet{Files: map[string][]byte{"opencode/opencode.json": []byte(`{"model":"x"}`)}},
		Render: &TrustSet{Files: map[string][]byte{"opencode/opencode.json": []byte(`{}`)}},
	}
	var b bytes.Buffer
	if err := v.printFiles(context.Background(), &b, runner.Git{}, nil); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	want := "opencode/opencode.json differs from asb's render (13 bytes against 2; no diff: git is not installed)\n"
	if !strings.Contains(out, want) || strings.Contains(out, "--no-index") {
		t.Errorf("printFiles without git:\n%s\nwant the line %q", out, want)
	}
}
