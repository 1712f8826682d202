package networkcmd

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLearnAsks(t *testing.T) {
	dir, f, out, _ := folder(t)
	sb := filepath.Join(dir, "sandbox.yaml")
	before := read(t, sb)
	f.IO.In = strings.NewReader("n\nyes\n")
	o := &LearnOptions{Factory: f, Since: time.Hour, Log: &fixtureLog{level: "debug"}, IsTerminal: func() bool { return true }}
	if err := runLearn(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got, want := read(t, sb), learned(before, "objects.githubusercontent.com"); got != want {
		t.Errorf("sandbox.yaml after n, yes:\n%s\nwant:\n%s", got, want)
	}
	wantLines(t, "asb network learn", out.String(),
		"allow registry.npmjs.org? [y/N] allow objects.githubusercontent.com? [y/N] \nadded to network.allow: objects.githubusercontent.com\n")
}

func TestLearnInputEnds(t *testing.T) {
	dir, f, out, _ := folder(t)
	before := read(t, filepath.Join(dir, "sandbox.yaml"))
	f.IO.In = strings.NewReader("")
	o := &LearnOptions{Factory: f, Since: time.Hour, Log: &fixtureLog{level: "debug"}, IsTerminal: func() bool { return true }}
	if err := runLearn(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "sandbox.yaml")) != before || !strings.Contains(out.String(), "Nothing was accepted; sandbox.yaml was not changed.") {
		t.Errorf("an ended input changed something:\n%s", out)
	}
}

func TestLearnWithoutTerminal(t *testing.T) {
	dir, f, out, _ := folder(t)
	before := read(t, filepath.Join(dir, "sandbox.yaml"))
	f.IO.In = strings.NewReader("y\ny\n") // a pipe is no terminal: not read
	if err := runLearn(context.Background(), &LearnOptions{Factory: f, Log: &fixtureLog{level: "debug"}}); err != nil {
		t.Fatal(err)
	}
	if read(t, filepath.Join(dir, "sandbox.yaml")) != before {
		t.Error("learn without a terminal or --yes changed sandbox.yaml")
	}
	wantLines(t, "asb network learn", out.String(), "  old.example.org  refused once (DNS lookup)\n",
		"Nothing was changed: there is no terminal to ask on. asb network learn --yes allows them all; asb network allow HOST… allows some.\n")
	if strings.Contains(out.String(), "allow registry.npmjs.org?") {
		t.Error("asked without a terminal")
	}
}

func TestLearnUnderNone(t *testing.T) {
	dir, f, out, _ := folder(t)
	sb := filepath.Join(dir, "sandbox.yaml")
	i := strings.Index(read(t, sb), "network:")
	none := read(t, sb)[:i] + "network: none\n"
	if err := os.WriteFile(sb, []byte(none), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := runLearn(context.Background(), &LearnOptions{Factory: f, Yes: true, Log: &fixtureLog{level: "debug"}}); err != nil {
		t.Fatal(err)
	}
	if read(t, sb) != none || !strings.Contains(out.String(), "network is none: the VM reaches no host, and asb network learn only adds to an allow list") {
		t.Errorf("learn under none:\n%s", out)
	}
}
