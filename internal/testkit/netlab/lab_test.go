package netlab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

func query(t *testing.T, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		t.Fatal(err)
	}
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		t.Fatal(err)
	}
	out, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The name server answers A for a lab name (any case), nothing for its
// AAAA, and NXDOMAIN for a name it does not know.
func TestAnswer(t *testing.T) {
	c := &Config{Names: map[string]string{"api.example.com": "203.0.113.11"}}
	cases := []struct {
		name  string
		typ   dnsmessage.Type
		rcode dnsmessage.RCode
		a     string
	}{
		{"API.example.com.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, "203.0.113.11"},
		{"api.example.com.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, ""},
		{"other.example.com.", dnsmessage.TypeA, dnsmessage.RCodeNameError, ""},
	}
	for _, tc := range cases {
		out, _, err := c.answer(query(t, tc.name, tc.typ))
		if err != nil {
			t.Fatal(err)
		}
		var m dnsmessage.Message
		if err := m.Unpack(out); err != nil {
			t.Fatal(err)
		}
		if m.ID != 7 || m.RCode != tc.rcode {
			t.Errorf("%s: id %d rcode %v, want 7 %v", tc.name, m.ID, m.RCode, tc.rcode)
		}
		var got string
		for _, a := range m.Answers {
			if r, ok := a.Body.(*dnsmessage.AResource); ok {
				got = net4(r.A)
			}
		}
		if got != tc.a {
			t.Errorf("%s: A %q, want %q", tc.name, got, tc.a)
		}
	}
}

func net4(a [4]byte) string {
	return net.IP(a[:]).String()
}

// The recorder keeps each request with its headers; the probe expands a
// header from its environment, tells a verified TLS fetch from one that
// was not, and says where a fetch failed.
func TestRecorderAndProbe(t *testing.T) {
	log := filepath.Join(t.TempDir(), "requests.jsonl")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv := httptest.NewTLSServer(&recorder{out: f})
	defer srv.Close()
	t.Setenv("NETLAB_TEST_TOKEN", "tok-123")
	r := Probe(context.Background(), srv.URL+"/x?y=1", map[string]string{"Authorization": "Bearer ${NETLAB_TEST_TOKEN}"}, 5*time.Second)
	if !r.Reached || r.Verified || r.VerifyErr == "" || r.Status != 200 {
		t.Fatalf("probe of a server signed by an unknown CA: %+v", r)
	}
	raw, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	reqs, err := ReadRequests(raw)
	if err != nil || len(reqs) != 1 {
		t.Fatalf("requests %+v, %v", reqs, err)
	}
	if got := reqs[0].Header["Authorization"]; len(got) != 1 || got[0] != "Bearer tok-123" || reqs[0].Path != "/x?y=1" || !reqs[0].TLS {
		t.Errorf("recorded %+v", reqs[0])
	}
	srv.Close()
	if r := Probe(context.Background(), srv.URL, nil, time.Second); r.Reached || r.Stage != "connect" {
		t.Errorf("probe of a closed server: %+v, want stage connect", r)
	}
}

// The lab's certificate chains to its CA for every name and address.
func TestNewConfigCertificate(t *testing.T) {
	c, caPEM, err := NewConfig(map[string]string{"a.example.com": "203.0.113.1"}, "203.0.113.53", nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	pair, err := tls.X509KeyPair([]byte(c.Cert), []byte(c.Key))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a.example.com", "203.0.113.1"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: name}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
