package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/schema"
)

func TestCapsOf(t *testing.T) {
	for _, tc := range []struct {
		in                                 string
		row                                string
		strict, deny, fromFile, hdr, newer bool
		older                              bool
	}{
		{in: "msb 0.7.2", row: "0.7.2"},
		{in: "0.7.3", row: "0.7.3", strict: true},
		{in: "0.7.4", row: "0.7.4", strict: true},
		{in: "msb 0.7.5\n", row: "0.7.5", strict: true, deny: true},
		{in: "0.7.6", row: "0.7.6", strict: true, deny: true, fromFile: true},
		{in: "0.7.8", row: "0.7.8", strict: true, deny: true, fromFile: true, hdr: true},
		{in: "v0.7.11", row: "0.7.8", strict: true, deny: true, fromFile: true, hdr: true, newer: true},
		{in: "0.7.8-rc.1", row: "0.7.8", strict: true, deny: true, fromFile: true, hdr: true},
		{in: "0.6.18", older: true},
	} {
		c, err := CapsOf(tc.in)
		if err != nil {
			t.Fatalf("CapsOf(%q): %v", tc.in, err)
		}
		if c.Row != tc.row || c.StrictDefault != tc.strict || c.DenyResponse != tc.deny || c.ConfPathsFromFile != tc.fromFile ||
			c.HeaderFields != tc.hdr || c.Newer != tc.newer || c.Older != tc.older {
			t.Errorf("CapsOf(%q) = %+v", tc.in, c)
		}
	}
	for _, bad := range []string{"", "msb", "0.7", "seven"} {
		if _, err := CapsOf(bad); err == nil {
			t.Errorf("CapsOf(%q) read a version", bad)
		}
	}
}

// countingHost answers msb --version and counts the calls.
type countingHost struct {
	SystemHost
	msb     string
	version string
	runs    int
}

func (h *countingHost) LookPath(name string) (string, error) {
	if name == "msb" && h.msb != "" {
		return h.msb, nil
	}
	return "", errors.New("not found")
}

func (h *countingHost) Run(_ context.Context, name string, args ...string) ([]byte, []byte, error) {
	h.runs++
	return []byte("msb " + h.version + "\n"), nil, nil
}

// msb --version runs once per binary; a changed binary is asked again.
func TestDetectMSBCachesPerBinary(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "msb")
	if err := os.WriteFile(bin, []byte("v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(MSBCacheEnv, filepath.Join(dir, "cache.json"))
	h := &countingHost{msb: bin, version: "0.7.5"}
	for range 3 {
		_, c, err := DetectMSB(context.Background(), h)
		if err != nil || c.Row != "0.7.5" {
			t.Fatalf("DetectMSB = %+v, %v", c, err)
		}
	}
	if h.runs != 1 {
		t.Errorf("msb --version ran %d times for one binary, want 1", h.runs)
	}
	if err := os.WriteFile(bin, []byte("v2 longer"), 0o755); err != nil {
		t.Fatal(err)
	}
	h.version = "0.7.8"
	if _, c, _ := DetectMSB(context.Background(), h); c.Row != "0.7.8" || h.runs != 2 {
		t.Errorf("an upgraded msb: row %q after %d runs", c.Row, h.runs)
	}
}

func TestNeedMSB(t *testing.T) {
	none := func(string) (string, error) { return "", errors.New("no") }
	if err := NeedMSB(none, []string{"image:build"}); err != nil {
		t.Errorf("image:build needs no msb: %v", err)
	}
	err := NeedMSB(none, []string{"status"})
	if err == nil || !strings.Contains(err.Error(), "is not on PATH") || !strings.Contains(err.Error(), "npm pack @superradcompany/microsandbox") {
		t.Errorf("NeedMSB(status) = %v", err)
	}
	if _, _, err := DetectMSB(context.Background(), &countingHost{}); !errors.Is(err, ErrNoMSB) {
		t.Errorf("DetectMSB without msb: %v", err)
	}
}

func TestHasDecidesEachPrimitiveFromTheTable(t *testing.T) {
	for _, tc := range []struct {
		version string
		want    map[Primitive]bool
	}{
		{"0.7.2", map[Primitive]bool{PrimLabels: true}},
		{"0.7.3", map[Primitive]bool{PrimLabels: true, PrimWait: true}},
		{"0.7.7", map[Primitive]bool{PrimLabels: true, PrimWait: true, PrimDf: true, PrimPrune: true}},
		{"0.7.12", map[Primitive]bool{PrimLabels: true, PrimWait: true, PrimDf: true, PrimPrune: true}},
		{"0.6.18", map[Primitive]bool{}},
	} {
		c := MustCaps(tc.version)
		for _, p := range []Primitive{PrimLabels, PrimDf, PrimPrune, PrimWait, Primitive("msb teleport")} {
			if got := c.Has(p); got != tc.want[p] {
				t.Errorf("%s Has(%s) = %v, want %v", tc.version, p, got, tc.want[p])
			}
		}
	}
}

// TestEveryFeatureHasAField: each feature of the table of releases
// (schema.MSBReleases) turns on a field of MSBCaps.
func TestEveryFeatureHasAField(t *testing.T) {
	for _, r := range schema.MSBReleases {
		for _, f := range r.Features {
			var c MSBCaps
			c.set(f)
			if c == (MSBCaps{}) {
				t.Errorf("msb %s: feature %q sets no field of MSBCaps", r.Version, f)
			}
		}
	}
}

// TestKnownMSBRunsNothing: KnownMSB names only what an earlier command
// asked the same binary (DetectMSB, asb doctor), and never runs msb.
func TestKnownMSBRunsNothing(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "msb")
	if err := os.WriteFile(bin, []byte("v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(MSBCacheEnv, filepath.Join(dir, "cache.json"))
	h := &countingHost{msb: bin, version: "0.7.2"}
	if v := KnownMSB(h); v != "" || h.runs != 0 {
		t.Fatalf("before any command asked: KnownMSB = %q after %d runs", v, h.runs)
	}
	if c := checkMSBVersion(context.Background(), h, bin); c.Status == StatusFail {
		t.Fatalf("doctor's version check: %+v", c)
	}
	if v := KnownMSB(h); v != "0.7.2" || h.runs != 1 {
		t.Errorf("after asb doctor: KnownMSB = %q after %d runs, want 0.7.2 after 1", v, h.runs)
	}
	if err := os.WriteFile(bin, []byte("v2 longer"), 0o755); err != nil {
		t.Fatal(err)
	}
	if v := KnownMSB(h); v != "" {
		t.Errorf("an upgraded binary nobody asked yet: KnownMSB = %q", v)
	}
}
