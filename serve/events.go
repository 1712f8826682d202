package serve

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// The notifications asb sends: the agent waits for an answer (a permission
// or a question), finished its turn, or failed.
const (
	KindInput = "input"
	KindDone  = "done"
	KindError = "error"
)

// Event is one notable thing the agent did. ID is the same for every client
// that sees the event (the dedup key); Session names the agent's session.
type Event struct {
	ID      string
	Kind    string
	Session string
}

// Source delivers the agent's events to emit until ctx ends or the stream
// does. The OpenCode server's stream is one; tests drive a fake.
type Source interface {
	Events(ctx context.Context, emit func(Event)) error
}

// OpenCodeEvent reads one event of OpenCode's stream (the JSON of an SSE
// data line); ok is false for the many events no notification is made of.
func OpenCodeEvent(data []byte) (Event, bool) {
	var ev struct {
		Type       string `json:"type"`
		Properties struct {
			ID        string          `json:"id"`
			SessionID string          `json:"sessionID"`
			Error     json.RawMessage `json:"error"`
		} `json:"properties"`
	}
	if json.Unmarshal(data, &ev) != nil {
		return Event{}, false
	}
	p := ev.Properties
	switch ev.Type {
	case "permission.asked", "permission.updated", "question.asked":
		if p.ID == "" {
			return Event{}, false
		}
		return Event{ID: ev.Type + ":" + p.ID, Kind: KindInput, Session: p.SessionID}, true
	case "session.idle":
		return Event{ID: "idle:" + p.SessionID, Kind: KindDone, Session: p.SessionID}, true
	case "session.error":
		sum := sha256.Sum256(p.Error)
		return Event{ID: "error:" + p.SessionID + ":" + hex.EncodeToString(sum[:6]), Kind: KindError, Session: p.SessionID}, true
	}
	return Event{}, false
}

// OpenCodeSource is an OpenCode server's event stream (GET /event).
type OpenCodeSource struct{ Server Server }

// Events reads the stream until it ends or ctx does.
func (s OpenCodeSource) Events(ctx context.Context, emit func(Event)) error {
	req, err := s.Server.Request(ctx, "/event")
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("the agent's event stream at %s: %w", s.Server.URL, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("the agent's event stream at %s: %s", s.Server.URL, resp.Status)
	}
	return ReadSSE(resp.Body, func(data []byte) {
		if e, ok := OpenCodeEvent(data); ok {
			emit(e)
		}
	})
}

// ReadSSE calls data with each event's data (its data: lines joined) of a
// server-sent event stream.
func ReadSSE(r io.Reader, data func([]byte)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 8<<20)
	var buf []string
	flush := func() {
		if len(buf) > 0 {
			data([]byte(strings.Join(buf, "\n")))
			buf = buf[:0]
		}
	}
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			flush()
			continue
		}
		if v, ok := strings.CutPrefix(line, "data:"); ok {
			buf = append(buf, strings.TrimPrefix(v, " "))
		}
	}
	flush()
	return sc.Err()
}
