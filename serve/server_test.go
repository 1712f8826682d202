package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// opencodeLike answers as OpenCode's server does behind
// OPENCODE_SERVER_PASSWORD: basic auth (user opencode), /global/health,
// /event as server-sent events.
func opencodeLike(t *testing.T, pw string) *httptest.Server {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "opencode" || p != pw {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/global/health":
			fmt.Fprint(w, `{"healthy":true}`)
		case "/event":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"type\":\"server.connected\",\"properties\":{}}\n\n")
			fmt.Fprint(w, "data: {\"type\":\"permission.asked\",\"properties\":{\"id\":\"per_1\",\"sessionID\":\"s\"}}\n\n")
			fmt.Fprint(w, "data: {\"type\":\"session.idle\",\"properties\":{\"sessionID\":\"s\"}}\n\n")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func TestUpAndEvents(t *testing.T) {
	hs := opencodeLike(t, "right")
	ctx := context.Background()
	s := Server{URL: hs.URL, User: "opencode", Password: "right", Health: "/global/health"}
	if up, err := Up(ctx, s); !up || err != nil {
		t.Fatalf("Up = %v, %v", up, err)
	}
	var got []string
	if err := (OpenCodeSource{Server: s}).Events(ctx, func(e Event) { got = append(got, e.Kind) }); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[input done]" {
		t.Fatalf("events %v", got)
	}
	wrong := s
	wrong.Password = "wrong"
	var wp *WrongPasswordError
	if up, err := Up(ctx, wrong); up || !errors.As(err, &wp) {
		t.Fatalf("Up with the wrong password = %v, %v", up, err)
	}
	hs.Close()
	if up, err := Up(ctx, s); up || err != nil {
		t.Fatalf("Up of a closed server = %v, %v", up, err)
	}
}
