package netlab

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

// Serve runs the lab until ctx ends: the name server, an HTTPS (443) and
// an HTTP (80) server on each address of Names, and the HTTP listeners.
// Every request is appended to c.Log; ready is called once all listen.
func (c *Config) Serve(ctx context.Context, ready func(), logf func(string, ...any)) error {
	cert, err := tls.X509KeyPair([]byte(c.Cert), []byte(c.Key))
	if err != nil {
		return fmt.Errorf("the servers' certificate: %w", err)
	}
	rec, err := os.OpenFile(c.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer rec.Close()
	h, err := c.handler(&recorder{out: rec})
	if err != nil {
		return err
	}
	var lns []net.Listener
	closeAll := func() {
		for _, ln := range lns {
			_ = ln.Close()
		}
	}
	listen := func(addr string, tlsConf *tls.Config) error {
		ln, err := net.Listen("tcp4", addr)
		if err != nil {
			return err
		}
		lns = append(lns, ln)
		srv := &http.Server{Handler: h, TLSConfig: tlsConf, ReadHeaderTimeout: 30 * time.Second}
		go func() {
			if tlsConf != nil {
				_ = srv.ServeTLS(ln, "", "")
			} else {
				_ = srv.Serve(ln)
			}
		}()
		return nil
	}
	tlsConf := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	for _, ip := range c.addresses() {
		if err := listen(net.JoinHostPort(ip, "443"), tlsConf); err != nil {
			closeAll()
			return err
		}
		if err := listen(net.JoinHostPort(ip, "80"), nil); err != nil {
			closeAll()
			return err
		}
	}
	for _, a := range c.HTTP {
		if err := listen(a, nil); err != nil {
			closeAll()
			return err
		}
	}
	dnsErr := make(chan error, 1)
	dctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { dnsErr <- c.serveDNS(dctx, logf) }()
	time.Sleep(50 * time.Millisecond) // the name server's listen errors come first
	select {
	case err := <-dnsErr:
		closeAll()
		return fmt.Errorf("name server: %w", err)
	default:
	}
	ready()
	<-ctx.Done()
	closeAll()
	return nil
}

// addresses are the distinct addresses of Names, sorted.
func (c *Config) addresses() []string {
	var out []string
	for _, ip := range c.Names {
		if !slices.Contains(out, ip) {
			out = append(out, ip)
		}
	}
	slices.Sort(out)
	return out
}

// recorder records each request and answers "netlab HOST PATH".
type recorder struct {
	mu  sync.Mutex
	out *os.File
}

func (h *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := h.record(r); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	answer(w, r)
}

// record appends the request to the log.
func (h *recorder) record(r *http.Request) error {
	req := Request{Host: r.Host, Method: r.Method, Path: r.URL.RequestURI(), Header: r.Header, TLS: r.TLS != nil, Time: time.Now().UTC()}
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		req.Listener = a.String()
	}
	if r.TLS != nil {
		req.SNI = r.TLS.ServerName
	}
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, err = h.out.Write(append(line, '\n')); err != nil {
		return err
	}
	return h.out.Sync()
}

// answer is the lab's answer to anything but the model: "netlab HOST PATH".
func answer(w http.ResponseWriter, r *http.Request) {
	fmt.Fprintf(w, "netlab %s %s\n", r.Host, r.URL.Path)
}

// handler is the servers' handler: the recorder, and the model's answers
// on its host when the lab serves one.
func (c *Config) handler(rec *recorder) (http.Handler, error) {
	if c.Model == nil {
		return rec, nil
	}
	m, err := newModelHandler(c.Model, http.HandlerFunc(answer))
	if err != nil {
		return nil, err
	}
	return recordThen{rec: rec, h: m}, nil
}
