package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestDebianURI(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"deb822", "Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm\n", "http://deb.debian.org/debian"},
		{"one-line", "deb http://mirror.example.com/debian/ trixie main\n", "http://mirror.example.com/debian"},
		{"one-line with options", "deb [arch=amd64 signed-by=/k.gpg] https://m.example.org/debian trixie main\n", "https://m.example.org/debian"},
		{"security only", "URIs: http://deb.debian.org/debian-security\n", ""},
		{"commented", "# deb http://deb.debian.org/debian trixie main\n", ""},
		{"ubuntu", "deb http://archive.ubuntu.com/ubuntu noble main\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := debianURI([]byte(tc.src)); got != tc.want {
				t.Errorf("debianURI = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestBaseImageArgs(t *testing.T) {
	b := BaseImage{Suite: "trixie", Slim: true, Mirror: "http://m.example/debian", SourceDateEpoch: "1"}
	args := b.mmdebstrapArgs()
	for _, want := range []string{"--variant=minbase", "--include=ca-certificates", "trixie", "-",
		"deb http://m.example/debian trixie main", "deb http://m.example/debian trixie-updates main",
		"deb http://m.example/debian-security trixie-security main", "--dpkgopt=path-exclude=/usr/share/doc/*"} {
		if !slices.Contains(args, want) {
			t.Errorf("mmdebstrap args lack %q: %q", want, args)
		}
	}
	full := BaseImage{Suite: "sid", Mirror: "http://m.example/debian"}
	for _, a := range full.mmdebstrapArgs() {
		if strings.Contains(a, "path-exclude") || strings.Contains(a, "-updates") || strings.Contains(a, "-security") {
			t.Errorf("sid without -slim has %q", a)
		}
	}
	if b.Recipe() == full.Recipe() || b.Recipe() != (BaseImage{Suite: "trixie", Slim: true, Mirror: "http://m.example/debian", SourceDateEpoch: "1"}).Recipe() {
		t.Error("Recipe is not a digest of the inputs")
	}
}

// fakeTools writes stand-ins for mmdebstrap and a builder on a PATH of
// their own: mmdebstrap prints a tar-like stream, the builder records its
// arguments and what it read.
func fakeTools(t *testing.T, mmdebstrap string) (dir string) {
	t.Helper()
	dir = t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if mmdebstrap != "" {
		write("mmdebstrap", mmdebstrap)
	}
	write("builder", `echo "$@" > "$(dirname "$0")/builder.args"; cat > "$(dirname "$0")/builder.stdin"`)
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	return dir
}

func TestBaseImageBuild(t *testing.T) {
	dir := fakeTools(t, `echo "epoch=$SOURCE_DATE_EPOCH suite=$4"; echo progress >&2`)
	b := BaseImage{Builder: []string{filepath.Join(dir, "builder"), "--root", "/r"}, Ref: "localhost/debian:trixie",
		Suite: "trixie", Mirror: "http://m.example/debian", SourceDateEpoch: "1700000000"}
	if err := b.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "builder.args"))
	stdin, _ := os.ReadFile(filepath.Join(dir, "builder.stdin"))
	want := "--root /r import --change CMD [\"bash\"] --change LABEL " + BaseLabel + "=" + b.Recipe() + " - localhost/debian:trixie\n"
	if string(args) != want {
		t.Errorf("builder ran with %q, want %q", args, want)
	}
	if !strings.HasPrefix(string(stdin), "epoch=1700000000 ") {
		t.Errorf("the builder read %q, not mmdebstrap's output", stdin)
	}
}

func TestBaseImageBuildFails(t *testing.T) {
	dir := fakeTools(t, `echo "E: cannot reach the mirror" >&2; exit 3`)
	b := BaseImage{Builder: []string{filepath.Join(dir, "builder")}, Ref: "localhost/debian:trixie", Suite: "trixie", Mirror: "http://m/debian"}
	err := b.Build(context.Background())
	var te *ToolError
	if !errors.As(err, &te) || te.Code != 3 || !strings.Contains(err.Error(), "cannot reach the mirror") {
		t.Fatalf("a failing mmdebstrap: %v", err)
	}
	none := BaseImage{Builder: []string{"podman"}, Ref: "localhost/debian:trixie", Suite: "trixie",
		LookPath: func(string) (string, error) { return "", errors.New("not found") }}
	if err := none.Build(context.Background()); err == nil || !strings.Contains(err.Error(), "apt-get install mmdebstrap") {
		t.Fatalf("without mmdebstrap: %v", err)
	}
}
