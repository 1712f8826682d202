package netlab

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// answer is the DNS reply to query: an A record for a known name, no
// record (NOERROR) for another type of a known name, NXDOMAIN otherwise.
// It also returns the name asked, for the log.
func (c *Config) answer(query []byte) ([]byte, string, error) {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil, "", err
	}
	q, err := p.Question()
	if err != nil {
		return nil, "", err
	}
	name := strings.ToLower(strings.TrimSuffix(q.Name.String(), "."))
	ip, known := c.Names[name]
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if err := b.StartQuestions(); err != nil {
		return nil, name, err
	}
	if err := b.Question(q); err != nil {
		return nil, name, err
	}
	if err := b.StartAnswers(); err != nil {
		return nil, name, err
	}
	if a := net.ParseIP(ip).To4(); known && q.Type == dnsmessage.TypeA && a != nil {
		rr := dnsmessage.AResource{A: [4]byte(a)}
		if err := b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, rr); err != nil {
			return nil, name, err
		}
	}
	out, err := b.Finish()
	return out, name, err
}

// serveDNS answers on addr (UDP and TCP, port 53) until ctx ends; logf
// records each name asked.
func (c *Config) serveDNS(ctx context.Context, logf func(string, ...any)) error {
	addr := net.JoinHostPort(c.DNS, "53")
	pc, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		_ = pc.Close()
		return err
	}
	go func() { <-ctx.Done(); _ = pc.Close(); _ = ln.Close() }()
	go c.dnsTCP(ln, logf)
	buf := make([]byte, 4096)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		out, name, err := c.answer(buf[:n])
		logf("dns udp %s %q err=%v", from, name, err)
		if err == nil {
			_, _ = pc.WriteTo(out, from)
		}
	}
}

func (c *Config) dnsTCP(ln net.Listener, logf func(string, ...any)) {
	for {
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer conn.Close()
			for {
				var n uint16
				if binary.Read(conn, binary.BigEndian, &n) != nil {
					return
				}
				q := make([]byte, n)
				if _, err := io.ReadFull(conn, q); err != nil {
					return
				}
				out, name, err := c.answer(q)
				logf("dns tcp %s %q err=%v", conn.RemoteAddr(), name, err)
				if err != nil {
					return
				}
				_ = binary.Write(conn, binary.BigEndian, uint16(len(out)))
				_, _ = conn.Write(out)
			}
		}()
	}
}
