package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/internal/proc"
)

// BaseImage builds a Debian base image from the distribution's packages,
// for hosts that cannot pull one: mmdebstrap writes a minimal root file
// system as a tar to a pipe, and the builder imports it under Ref. No tar
// is left on disk.
type BaseImage struct {
	Builder []string // the builder's argv before its subcommand ("podman", "--root", …)
	Ref     string   // localhost/debian:SUITE[-slim]
	Suite   string   // trixie, bookworm, …
	Slim    bool     // no manuals, docs or locales; no recommends
	Mirror  string   // the Debian mirror; "" reads the host's apt sources, else deb.debian.org
	// SourceDateEpoch makes the tar, and so the image's layer digest, the
	// same on every machine for the same packages.
	SourceDateEpoch string
	Stderr          io.Writer
	LookPath        func(string) (string, error)
	ReadFile        func(string) ([]byte, error)
}

// DefaultDebianMirror is the mirror used when the host's apt names none.
const DefaultDebianMirror = "http://deb.debian.org/debian"

// BaseLabel marks a base image asb built, with a digest of its recipe
// (suite, variant, mirror, mmdebstrap's arguments).
const BaseLabel = "org.agents-sandbox.base"

// Recipe is the digest BaseLabel holds: a change of any input (asb's own
// recipe included) builds the base again.
func (b BaseImage) Recipe() string {
	sum := sha256.Sum256([]byte(strings.Join(append(b.mmdebstrapArgs(), "epoch="+b.SourceDateEpoch), "\x00")))
	return hex.EncodeToString(sum[:6])
}

// Exists reports whether the builder has the image, as this recipe makes
// it. An image of that name that asb did not build (no BaseLabel) is the
// user's, and counts as there.
func (b BaseImage) Exists(ctx context.Context) bool {
	argv := append(append([]string{}, b.Builder...), "image", "inspect", "--format",
		`{{index .Config.Labels "`+BaseLabel+`"}}`, b.Ref)
	out, err := proc.Command(ctx, argv[0], argv[1:]...).Output()
	if err != nil {
		return false
	}
	label := strings.TrimSpace(string(out))
	return label == "" || label == "<no value>" || label == b.Recipe()
}

// Build runs mmdebstrap into the builder's import.
func (b BaseImage) Build(ctx context.Context) error {
	look := b.LookPath
	if look == nil {
		look = exec.LookPath
	}
	if _, err := look("mmdebstrap"); err != nil {
		return fmt.Errorf("building %s needs mmdebstrap, which is not installed: sudo apt-get install mmdebstrap (or pull a base image: set ARG BASE_IMAGE in toolchain/Dockerfile to a registry's image)", b.Ref)
	}
	deb := proc.Group(ctx, "mmdebstrap", b.mmdebstrapArgs()...)
	deb.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+b.SourceDateEpoch)
	imp := append(append([]string{}, b.Builder...), "import", "--change", `CMD ["bash"]`,
		"--change", "LABEL "+BaseLabel+"="+b.Recipe(), "-", b.Ref)
	load := proc.Group(ctx, imp[0], imp[1:]...)
	pipe, err := deb.StdoutPipe()
	if err != nil {
		return err
	}
	load.Stdin = pipe
	var debErr, loadErr bytes.Buffer
	deb.Stderr = io.MultiWriter(&debErr, b.stderr())
	load.Stderr, load.Stdout = &loadErr, io.Discard
	if err := deb.Start(); err != nil {
		return fmt.Errorf("mmdebstrap: %w", err)
	}
	if err := load.Start(); err != nil {
		_ = deb.Process.Kill()
		_ = deb.Wait()
		return fmt.Errorf("%s import: %w", filepath.Base(b.Builder[0]), err)
	}
	derr := deb.Wait()
	lerr := load.Wait()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("building %s: %w", b.Ref, ctx.Err())
	case derr != nil:
		return &ToolError{Cmd: []string{"mmdebstrap", b.Suite}, Code: exitCode(derr), Output: debErr.String(), Err: derr}
	case lerr != nil:
		return &ToolError{Cmd: append(append([]string{}, b.Builder...), "import"), Code: exitCode(lerr), Output: loadErr.String(), Err: lerr}
	}
	return nil
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return 0
}

func (b BaseImage) stderr() io.Writer {
	if b.Stderr == nil {
		return io.Discard
	}
	return b.Stderr
}

// mmdebstrapArgs are a minbase system with CA certificates, from the
// suite, its updates and its security archive; the slim variant drops
// manuals, docs and locales for good (as Debian's own -slim images do)
// and installs no recommends. The host's resolv.conf and hostname, which
// mmdebstrap copies in, are removed: they are the build host's.
func (b BaseImage) mmdebstrapArgs() []string {
	mirror := b.Mirror
	if mirror == "" {
		mirror = hostDebianMirror(b.ReadFile)
	}
	security := strings.TrimSuffix(mirror, "/debian") + "/debian-security"
	if !strings.HasSuffix(mirror, "/debian") {
		security = "http://deb.debian.org/debian-security"
	}
	args := []string{"--quiet", "--variant=minbase", "--include=ca-certificates"}
	if b.Slim {
		args = append(args,
			"--dpkgopt=path-exclude=/usr/share/man/*",
			"--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-include=/usr/share/locale/locale.alias",
			"--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-include=/usr/share/doc/*/copyright",
			"--dpkgopt=path-exclude=/usr/share/info/*",
			`--aptopt=APT::Install-Recommends "false"`)
	}
	args = append(args, `--customize-hook=rm -f "$1"/etc/resolv.conf "$1"/etc/hostname`, b.Suite, "-",
		"deb "+mirror+" "+b.Suite+" main")
	if b.Suite != "sid" && b.Suite != "unstable" {
		args = append(args, "deb "+mirror+" "+b.Suite+"-updates main", "deb "+security+" "+b.Suite+"-security main")
	}
	return args
}

// hostDebianMirror returns the first Debian mirror (a URI ending in
// /debian) of the host's apt sources, which is the one the host's network
// is known to reach; DefaultDebianMirror when there is none.
func hostDebianMirror(readFile func(string) ([]byte, error)) string {
	if readFile == nil {
		readFile = os.ReadFile
	}
	files := []string{"/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"}
	if more, err := filepath.Glob("/etc/apt/sources.list.d/*"); err == nil {
		files = append(files, more...)
	}
	for _, f := range files {
		data, err := readFile(f)
		if err != nil {
			continue
		}
		if m := debianURI(data); m != "" {
			return m
		}
	}
	return DefaultDebianMirror
}

// debianURI finds a Debian mirror in an apt sources file, one-line
// ("deb URI SUITE …") or deb822 ("URIs: URI") format.
func debianURI(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		var uris []string
		switch {
		case len(f) >= 3 && f[0] == "deb":
			uris = f[1:2]
			if strings.HasPrefix(f[1], "[") { // deb [arch=…] URI
				for i, w := range f {
					if strings.HasSuffix(w, "]") && i+1 < len(f) {
						uris = f[i+1 : i+2]
						break
					}
				}
			}
		case len(f) >= 2 && f[0] == "URIs:":
			uris = f[1:]
		}
		for _, u := range uris {
			u = strings.TrimSuffix(u, "/")
			if (strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")) && strings.HasSuffix(u, "/debian") {
				return u
			}
		}
	}
	return ""
}
