// Package netlab is a small internet for the real-boot network tests: a
// DNS server and HTTP(S) servers for a handful of names, each on an address
// of its own, with a test CA that the host running msb trusts. It runs
// inside the nested can-boot guest (which has no network device: nothing
// leaves it), where msb's DNS forwarding and TLS interception reach it as
// they would reach the internet. Every request is recorded, headers
// included, so a test can say what arrived where (a secret's real value,
// or its placeholder). The probe is the client side, run inside the
// microVM. Never linked into asb.
package netlab

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// Config is what the lab serves (the JSON file `netlab serve` reads).
type Config struct {
	DNS   string            // the name server's address (port 53, UDP and TCP)
	Names map[string]string // name -> IPv4 address; every address gets an HTTPS server on 443
	// HTTP are further plain-HTTP listeners (ADDR:PORT), e.g. a private
	// address, the metadata address, the host's loopback.
	HTTP []string
	Cert string // PEM of the servers' certificate (every name and address)
	Key  string // PEM of its key
	Log  string // where requests are recorded, one JSON line each
	// Model, when set, serves the scripted stand-in model on its host.
	Model *Model `json:",omitempty"`
}

// Request is one recorded request.
type Request struct {
	Listener string              `json:"listener"` // the address it arrived at
	TLS      bool                `json:"tls"`
	SNI      string              `json:"sni,omitempty"`
	Host     string              `json:"host"`
	Method   string              `json:"method"`
	Path     string              `json:"path"`
	Header   map[string][]string `json:"header"`
	Time     time.Time           `json:"time"` // when it arrived
}

// ReadRequests reads a request log.
func ReadRequests(data []byte) ([]Request, error) {
	var out []Request
	dec := json.NewDecoder(bytes.NewReader(data))
	for dec.More() {
		var r Request
		if err := dec.Decode(&r); err != nil {
			return out, fmt.Errorf("request log: %w", err)
		}
		out = append(out, r)
	}
	return out, nil
}

// CA is a test certificate authority and the servers' certificate.
type CA struct {
	CertPEM       []byte // the CA, for the trust store
	ServerCertPEM []byte
	ServerKeyPEM  []byte
}

// NewCA makes a CA and a server certificate it signs for names and ips.
func NewCA(names []string, ips []string) (*CA, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "asb netlab test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(48 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "asb netlab server"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(48 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     names,
	}
	for _, ip := range ips {
		tmpl.IPAddresses = append(tmpl.IPAddresses, net.ParseIP(ip))
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return &CA{
		CertPEM:       pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		ServerCertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		ServerKeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// ReadConfig reads the lab's JSON file.
func ReadConfig(path string) (*Config, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Config
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &c, nil
}

// NewConfig makes a lab for names (name -> IPv4 address) with its name
// server at dns and a fresh CA; it returns the config and the CA's PEM.
func NewConfig(names map[string]string, dns string, http []string, log string) (*Config, []byte, error) {
	var hosts, ips []string
	for n, ip := range names {
		hosts = append(hosts, n)
		ips = append(ips, ip)
	}
	ca, err := NewCA(hosts, ips)
	if err != nil {
		return nil, nil, err
	}
	return &Config{DNS: dns, Names: names, HTTP: http, Cert: string(ca.ServerCertPEM), Key: string(ca.ServerKeyPEM), Log: log}, ca.CertPEM, nil
}
