package outer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// CertsDir is the folder of toolchain/ whose *.crt files the image trusts.
const CertsDir = "toolchain/certs"

// HostCertPrefix starts the names of the certificates asb copies from this
// machine; .gitignore keeps them out of the repository (they are per
// machine). Other *.crt files there are the team's and are left alone.
const HostCertPrefix = "host-"

// IsHostCert reports whether rel (relative to the outer folder) is a copy
// SyncCerts makes of this machine's CA: toolchain/certs/host-<16 hex
// digits of its fingerprint>.crt, nothing under a subfolder, no other
// name. Such a file is outside the trust set because SyncCerts replaces or
// removes it before every build, whatever a commit put there; any other
// file under toolchain/, host-team/evil.crt included, goes into the image
// only as approved.
func IsHostCert(rel string) bool {
	name, ok := strings.CutPrefix(rel, CertsDir+"/"+HostCertPrefix)
	fp, crt := strings.CutSuffix(name, ".crt")
	if !ok || !crt || len(fp) != 16 {
		return false
	}
	for _, c := range fp {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// CertsSync is what SyncCerts changed.
type CertsSync struct {
	Added, Removed, Kept []string // file names under CertsDir
}

// SyncCerts makes CertsDir of the outer folder dir hold exactly cas as
// host-FINGERPRINT.crt: new ones are written (atomically), ones no longer
// on the host removed, unchanged ones not touched, so that the image build
// is not invalidated for nothing.
func SyncCerts(dir string, cas []host.CA) (CertsSync, error) {
	var s CertsSync
	root, err := folderfs.Open(dir)
	if err != nil {
		return s, err
	}
	defer root.Close()
	if err := root.MkdirAll(CertsDir, generator.ModeDir); err != nil {
		return s, fmt.Errorf("%s: %w", CertsDir, folderfs.Explain(CertsDir, err))
	}
	want := map[string][]byte{}
	for _, ca := range cas {
		want[HostCertPrefix+ca.Fingerprint[:16]+".crt"] = ca.PEM
	}
	entries, err := fs.ReadDir(root.FS(), CertsDir)
	if err != nil {
		return s, fmt.Errorf("%s: %w", CertsDir, folderfs.Explain(CertsDir, err))
	}
	for _, e := range entries {
		name := e.Name()
		if !IsHostCert(CertsDir+"/"+name) || want[name] != nil {
			continue
		}
		if err := root.Remove(CertsDir + "/" + name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return s, fmt.Errorf("%s: %w", CertsDir, err)
		}
		s.Removed = append(s.Removed, name)
	}
	var write []generator.PendingFile
	for name, pem := range want {
		rel := CertsDir + "/" + name
		if cur, err := root.ReadFile(rel, schema.MaxFileSize); err == nil && bytes.Equal(cur, pem) {
			s.Kept = append(s.Kept, name)
			continue
		}
		write = append(write, generator.PendingFile{Path: rel, Data: pem, Mode: generator.ModeFile})
		s.Added = append(s.Added, name)
	}
	if err := generator.WriteFilesIn(root, write); err != nil {
		return CertsSync{}, fmt.Errorf("%s: %w", CertsDir, err)
	}
	slices.Sort(s.Added)
	slices.Sort(s.Kept)
	return s, nil
}

// SyncHostCerts is SyncCerts with this machine's extra CAs (host.ExtraCAs),
// saying on w which ones the image now trusts and which were dropped. A
// folder without toolchain/certs/ (made by an older asb, or a toolchain of
// the user's own, whose Dockerfile does not copy it) is left alone: making
// the folder would only change the build's inputs.
func SyncHostCerts(dir string, w io.Writer) error {
	if fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(CertsDir))); err != nil || !fi.IsDir() {
		return nil
	}
	cas := host.ExtraCAs(os.DirFS("/"))
	s, err := SyncCerts(dir, cas)
	if err != nil {
		return err
	}
	for _, ca := range cas {
		if slices.Contains(s.Added, HostCertPrefix+ca.Fingerprint[:16]+".crt") {
			fmt.Fprintf(w, "asb: the image trusts this machine's CA %s (%s)\n", ca.Subject, ca.Source)
		}
	}
	if len(s.Removed) > 0 {
		fmt.Fprintf(w, "asb: removed %s from %s (no longer on this machine)\n", strings.Join(s.Removed, ", "), CertsDir)
	}
	return nil
}
