package host

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"testing/fstest"
	"time"
)

func testCert(t *testing.T, cn string, isCA bool) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: isCA, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
}

func TestExtraCAs(t *testing.T) {
	proxy := testCert(t, "proxy-ca", true)
	company := testCert(t, "company-ca", true)
	leaf := testCert(t, "leaf", false)
	root := fstest.MapFS{
		"usr/local/share/ca-certificates/proxy.crt":      {Data: proxy},
		"usr/local/share/ca-certificates/sub/dup.crt":    {Data: proxy}, // the same CA twice
		"usr/local/share/ca-certificates/leaf.crt":       {Data: leaf},  // not a CA
		"usr/local/share/ca-certificates/notes.txt":      {Data: company},
		"etc/pki/ca-trust/source/anchors/company.pem":    {Data: append([]byte("junk\n"), company...)},
		"usr/share/ca-certificates/mozilla/stock.crt":    {Data: testCert(t, "stock", true)}, // distribution roots
		"etc/ca-certificates/trust-source/anchors/x.cer": {Data: []byte("not pem")},
	}
	got := ExtraCAs(root)
	if len(got) != 2 {
		t.Fatalf("got %d CAs, want the proxy's and the company's: %+v", len(got), got)
	}
	subjects := map[string]string{}
	for _, ca := range got {
		subjects[ca.Subject] = ca.Source
		if len(ca.Fingerprint) != 64 || len(parseCAs(ca.PEM)) != 1 {
			t.Errorf("%s: fingerprint %q, PEM does not parse back", ca.Subject, ca.Fingerprint)
		}
	}
	if subjects["CN=proxy-ca"] == "" || subjects["CN=company-ca"] != "/etc/pki/ca-trust/source/anchors/company.pem" {
		t.Errorf("subjects and sources: %v", subjects)
	}
	if got := ExtraCAs(fstest.MapFS{}); len(got) != 0 {
		t.Errorf("a host without extra CAs: %v", got)
	}
}
