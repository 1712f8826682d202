package host

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// CA is an extra CA certificate of this machine: one its administrator
// added to the system's trust store (a TLS-inspecting proxy's, a company's),
// as opposed to the distribution's stock roots.
type CA struct {
	Subject     string
	Fingerprint string // sha256 of the DER, hex
	Source      string // the file it came from
	PEM         []byte // the certificate alone, PEM-encoded
}

// AnchorDirs are where each distribution's trust tool takes locally added
// CAs from; a fresh image has none of them.
var AnchorDirs = []string{
	"usr/local/share/ca-certificates",          // Debian, Ubuntu, Alpine: update-ca-certificates
	"etc/pki/ca-trust/source/anchors",          // Fedora, RHEL, Amazon Linux: update-ca-trust
	"etc/pki/trust/anchors",                    // openSUSE, SLES
	"etc/ca-certificates/trust-source/anchors", // Arch: trust extract-compat
}

// ExtraCAs returns the CA certificates under AnchorDirs of root (os.DirFS("/")
// for this machine), each once, in fingerprint order. Unreadable files, and
// certificates that are not CAs, are skipped: they would not be trusted
// either.
func ExtraCAs(root fs.FS) []CA {
	seen := map[string]bool{}
	var out []CA
	for _, dir := range AnchorDirs {
		_ = fs.WalkDir(root, dir, func(p string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() || !certFile(p) {
				return nil
			}
			data, err := fs.ReadFile(root, p)
			if err != nil || len(data) > 1<<20 {
				return nil
			}
			for _, ca := range parseCAs(data) {
				if !seen[ca.Fingerprint] {
					seen[ca.Fingerprint] = true
					ca.Source = "/" + p
					out = append(out, ca)
				}
			}
			return nil
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Fingerprint < out[j].Fingerprint })
	return out
}

func certFile(p string) bool {
	switch strings.ToLower(path.Ext(p)) {
	case ".crt", ".pem", ".cer":
		return true
	}
	return false
}

func parseCAs(data []byte) []CA {
	var out []CA
	for len(data) > 0 {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			break
		}
		if b.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(b.Bytes)
		if err != nil || !c.IsCA {
			continue
		}
		sum := sha256.Sum256(b.Bytes)
		out = append(out, CA{Subject: c.Subject.String(), Fingerprint: hex.EncodeToString(sum[:]),
			PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: b.Bytes})})
	}
	return out
}
