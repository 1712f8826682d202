package netlab

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Result is what one probe of a URL found, printed as a JSON line.
type Result struct {
	URL     string `json:"url"`
	Reached bool   `json:"reached"`         // a lab server answered
	Stage   string `json:"stage,omitempty"` // where it failed: dns, connect, tls, http
	Err     string `json:"err,omitempty"`
	Status  int    `json:"status,omitempty"`
	Body    string `json:"body,omitempty"`
	// Verified: the server's certificate chained to the system's roots;
	// Issuer is who signed it (msb's CA when msb intercepts the TLS).
	Verified  bool   `json:"verified,omitempty"`
	VerifyErr string `json:"verify_err,omitempty"`
	Issuer    string `json:"issuer,omitempty"`
}

// Probe fetches rawURL with the headers (values expanded from the
// environment by the probe itself, so no command line holds them), each
// step bounded by timeout. TLS is verified against the system's roots;
// when that fails the request is made again without verification, so that
// egress and trust are told apart.
func Probe(ctx context.Context, rawURL string, header map[string]string, timeout time.Duration) Result {
	r := Result{URL: rawURL}
	u, err := url.Parse(rawURL)
	if err != nil {
		r.Stage, r.Err = "url", err.Error()
		return r
	}
	if net.ParseIP(u.Hostname()) == nil {
		lctx, cancel := context.WithTimeout(ctx, timeout)
		_, err := net.DefaultResolver.LookupHost(lctx, u.Hostname())
		cancel()
		if err != nil {
			r.Stage, r.Err = "dns", err.Error()
			return r
		}
	}
	resp, err := fetch(ctx, u, header, timeout, false)
	if err != nil {
		var uerr x509.UnknownAuthorityError
		var herr x509.HostnameError
		var cerr *tls.CertificateVerificationError
		if errors.As(err, &uerr) || errors.As(err, &herr) || errors.As(err, &cerr) {
			r.VerifyErr = err.Error()
			resp, err = fetch(ctx, u, header, timeout, true)
		}
	} else {
		r.Verified = u.Scheme == "https"
	}
	if err != nil {
		r.Stage, r.Err = stageOf(err), err.Error()
		return r
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	r.Status, r.Body = resp.StatusCode, string(body)
	r.Reached = strings.HasPrefix(r.Body, "netlab ")
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		r.Issuer = resp.TLS.PeerCertificates[0].Issuer.CommonName
	}
	return r
}

func fetch(ctx context.Context, u *url.URL, header map[string]string, timeout time.Duration, insecure bool) (*http.Response, error) {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		TLSHandshakeTimeout: timeout,
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: insecure}, //nolint:gosec // told apart from a verified fetch in Result
		DisableKeepAlives:   true,
	}
	c := &http.Client{Transport: tr, Timeout: 2 * timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header.Set(k, os.ExpandEnv(v))
	}
	return c.Do(req)
}

// stageOf names where a request failed.
func stageOf(err error) string {
	var op *net.OpError
	switch {
	case errors.As(err, &op) && op.Op == "dial":
		return "connect"
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "TLS handshake"):
		return "tls"
	default:
		return "http"
	}
}
