package runner

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"
)

// The network decisions of a VM, from msb 0.7.2's log of it. msb writes
// them as DEBUG lines of its runtime (so only for a VM created with
// --log-level debug), which `msb logs VM --source system --json` prints
// as JSON lines {"t": time, "s": "system", "d": "LEVEL target: message
// k=v …\n", "e": null or "b64", "id": null}. A DNS query msb refused names
// its domain, a TLS connection its SNI; a refused plain TCP connection only
// its address; a refused raw-IP or UDP connection leaves no line at all.
// No line of msb says "allowed" but those of the TLS proxy (intercept,
// bypass) and of the ICMP relay.

// NetEvent is one network decision msb logged.
type NetEvent struct {
	Time    time.Time
	Allowed bool
	// Kind is what asked: dns (a lookup), dns-resolver (a lookup sent to
	// a resolver of the guest's choosing), dns-rebind (an answer with a
	// private address), tcp, tcp-strict, tls, tls-bypass, tls-strict,
	// tls-mismatch (SNI and CONNECT disagree), connect-strict, icmp, dot,
	// dns-alt (DNS over another port), secret (a request carrying a
	// secret's placeholder to a host not in its allow list, blocked).
	Kind string
	Host string // the name msb logged (a DNS query, a TLS SNI), lower case; "" when none
	Dst  string // the address msb logged (IP or IP:port); "" when none
}

// Name is what the event is about: its host, or its address.
func (e NetEvent) Name() string {
	if e.Host != "" {
		return e.Host
	}
	return e.Dst
}

// netMessages are msb's messages of a decision, longest first (one may
// start with another: "TLS bypass denied …" and "TLS bypass").
var netMessages = func() []netMessage {
	m := []netMessage{
		{"DNS query denied by network policy", "dns", false},
		{"DNS resolver denied by network policy", "dns-resolver", false},
		{"DNS rebind protection: response contains private IP", "dns-rebind", false},
		{"secret violation: placeholder detected for disallowed host", "secret", false},
		{"TCP egress denied by domain policy", "tcp", false},
		{"TCP egress denied by strict hostname policy", "tcp-strict", false},
		{"TLS egress denied by domain policy", "tls", false},
		{"TLS bypass denied by strict hostname policy", "tls-strict", false},
		{"TLS SNI did not match CONNECT authority", "tls-mismatch", false},
		{"CONNECT tunnel denied by strict hostname policy", "connect-strict", false},
		{"ICMP echo denied by policy", "icmp", false},
		{"ICMPv6 echo denied by policy", "icmp", false},
		{"DoT port refused (TLS interception not configured); stub should fall back to TCP/53", "dot", false},
		{"alternative-DNS UDP port dropped; stub should fall back to UDP/53", "dns-alt", false},
		{"TLS intercept", "tls", true},
		{"TLS bypass", "tls-bypass", true},
		{"relaying ICMPv4 echo request", "icmp", true},
		{"relaying ICMPv6 echo request", "icmp", true},
	}
	sort.SliceStable(m, func(i, j int) bool { return len(m[i].msg) > len(m[j].msg) })
	return m
}()

type netMessage struct {
	msg, kind string
	allowed   bool
}

// NetLogTarget is the tracing target of msb's network engine.
const NetLogTarget = "microsandbox_network::"

var netLineRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\s*(?:TRACE|DEBUG|INFO|WARN|ERROR)\s+(?:.*?\s)?microsandbox_network::[\w:]+: (.*)$`)
})

// NetLog is where the network decisions of a VM come from: MSB, or a
// stand-in with fixture lines in tests.
type NetLog interface {
	// LogLevel is the runtime log level msb records for vm ("" when it
	// records none: info); found is false when msb has no such VM.
	LogLevel(ctx context.Context, vm string) (level string, found bool, err error)
	// SystemLog is what `msb logs VM --source system --json` prints (the
	// network engine's lines; since them, when since is not zero).
	SystemLog(ctx context.Context, vm string, since time.Time) ([]byte, error)
}

// LogLevel reads config.runtime.log_level from `msb inspect VM`.
func (m MSB) LogLevel(ctx context.Context, vm string) (string, bool, error) {
	out, err := Output(ctx, "", m.bin(), "inspect", vm, "--format", "json")
	if err != nil {
		var te *ToolError
		if errors.As(err, &te) && te.Code > 0 && strings.Contains(te.Output, "not found") {
			return "", false, nil
		}
		return "", false, err
	}
	var rec struct {
		Config struct {
			Runtime struct {
				LogLevel *string `json:"log_level"`
			} `json:"runtime"`
		} `json:"config"`
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		return "", true, fmt.Errorf("msb inspect %s --format json: %w", vm, err)
	}
	if l := rec.Config.Runtime.LogLevel; l != nil {
		return strings.ToLower(*l), true, nil
	}
	return "", true, nil
}

// SystemLog runs `msb logs VM --source system --json --grep
// microsandbox_network:: [--since RFC3339]`.
func (m MSB) SystemLog(ctx context.Context, vm string, since time.Time) ([]byte, error) {
	args := []string{"logs", vm, "--source", "system", "--json", "--grep", NetLogTarget}
	if !since.IsZero() {
		args = append(args, "--since", since.UTC().Format(time.RFC3339))
	}
	return Output(ctx, "", m.bin(), args...)
}

// NoVMError is a VM msb has no record of.
type NoVMError struct{ VM string }

func (e *NoVMError) Error() string {
	return fmt.Sprintf("msb has no VM %s: asb task vm:create (or the first asb task agent) creates it; its network decisions are logged from then on", e.VM)
}

// NetReport is what msb logged of the network decisions of a VM.
type NetReport struct {
	VM       string
	LogLevel string // the VM's runtime log level; "" is msb's default, info
	Events   []NetEvent
}

// Debug reports whether the VM logs its network decisions: msb writes them
// at debug level.
func (r NetReport) Debug() bool { return r.LogLevel == "debug" || r.LogLevel == "trace" }

// ReadNetLog reads the network decisions msb logged for vm since since
// (all, when zero).
func ReadNetLog(ctx context.Context, l NetLog, vm string, since time.Time) (NetReport, error) {
	r := NetReport{VM: vm}
	level, found, err := l.LogLevel(ctx, vm)
	if err != nil {
		return r, fmt.Errorf("read the log level of %s: %w", vm, err)
	}
	if !found {
		return r, &NoVMError{VM: vm}
	}
	r.LogLevel = level
	raw, err := l.SystemLog(ctx, vm, since)
	if err != nil {
		return r, fmt.Errorf("read the log of %s: %w", vm, err)
	}
	events, err := ParseNetLog(bytes.NewReader(raw))
	if err != nil {
		return r, fmt.Errorf("read the log of %s: %w", vm, err)
	}
	for _, e := range events {
		if since.IsZero() || !e.Time.Before(since) {
			r.Events = append(r.Events, e)
		}
	}
	return r, nil
}

// ParseNetLog reads the decisions among the JSON lines of `msb logs
// --json`; every other line (other sources, other messages, a line that
// is not JSON) is passed over.
func ParseNetLog(r io.Reader) ([]NetEvent, error) {
	var out []NetEvent
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if e, ok := parseNetLine(line); ok {
			out = append(out, e)
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func parseNetLine(line []byte) (NetEvent, bool) {
	at, body, ok := systemEntry(line)
	if !ok {
		return NetEvent{}, false
	}
	m := netLineRe().FindStringSubmatch(body)
	if m == nil {
		return NetEvent{}, false
	}
	e, ok := netEvent(m[1])
	if !ok {
		return NetEvent{}, false
	}
	e.Time, _ = time.Parse(time.RFC3339Nano, at)
	return e, true
}

// systemEntry reads a line of `msb logs --json` of the system source: its
// time (RFC 3339) and its text, decoded where msb sent it in base64 and
// without its line end; ok is false for another source or what is not
// such a line.
func systemEntry(line []byte) (at, body string, ok bool) {
	var entry struct {
		T string  `json:"t"`
		S string  `json:"s"`
		D string  `json:"d"`
		E *string `json:"e"`
	}
	if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &entry) != nil || entry.S != "system" {
		return "", "", false
	}
	body = entry.D
	if entry.E != nil && *entry.E == "b64" {
		b, err := base64.StdEncoding.DecodeString(body)
		if err != nil {
			return "", "", false
		}
		body = string(b)
	}
	return entry.T, strings.TrimRight(body, "\r\n"), true
}

// netEvent reads "message k=v …" into an event.
func netEvent(text string) (NetEvent, bool) {
	for _, nm := range netMessages {
		rest, ok := strings.CutPrefix(text, nm.msg)
		if !ok || rest != "" && rest[0] != ' ' {
			continue
		}
		f, ok := logFields(rest)
		if !ok {
			continue // "TLS bypass" is a prefix of other text: not this message
		}
		e := NetEvent{Kind: nm.kind, Allowed: nm.allowed}
		e.Host = strings.Trim(strings.ToLower(firstOf(f, "domain", "sni", "authority", "host")), ".")
		e.Dst = firstOf(f, "guest_dst", "dst")
		if nm.kind == "dns-resolver" {
			e.Dst = firstOf(f, "original_dst")
		}
		return e, true
	}
	return NetEvent{}, false
}

func firstOf(f map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := f[k]; v != "" {
			return v
		}
	}
	return ""
}

var fieldKeyRe = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`) })

// logFields reads tracing's " k=v k=\"quoted\" …" (Debug values such as
// Some(8.8.8.8) unwrapped, None dropped); ok is false when the text is not
// fields.
func logFields(s string) (map[string]string, bool) {
	f := map[string]string{}
	for s = strings.TrimLeft(s, " "); s != ""; s = strings.TrimLeft(s, " ") {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || !fieldKeyRe().MatchString(k) {
			return nil, false
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			v, rest, ok = cutQuoted(rest)
			if !ok {
				return nil, false
			}
		} else {
			v, rest, _ = strings.Cut(rest, " ")
		}
		if inner, ok := strings.CutPrefix(v, "Some("); ok {
			v = strings.Trim(strings.TrimSuffix(inner, ")"), `"`)
		}
		if v != "None" {
			f[k] = v
		}
		s = rest
	}
	return f, true
}

// cutQuoted reads a Rust Debug string at the start of s.
func cutQuoted(s string) (string, string, bool) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i])
			}
		case '"':
			return b.String(), s[i+1:], true
		default:
			b.WriteByte(c)
		}
	}
	return "", "", false
}
