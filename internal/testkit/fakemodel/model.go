package fakemodel

// model.go: a scripted stand-in for an OpenAI-compatible model server, so
// the real OpenCode agent can run end to end on loopback with no internet.

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// FakeModelID is the model name GET /v1/models lists and the answers carry
// when a request names none.
const FakeModelID = "fake-model"

// Texts the stand-in answers with when no script step applies.
const (
	TitleText = "Test title" // to a request without tools (OpenCode's title request)
	FinalText = "done"       // to a request with tools once the script has ended
)

// ModelStep is one answer of the scripted model: a tool call when Tool is
// set, otherwise the text Text.
type ModelStep struct {
	Tool string         // the tool to call, e.g. "write", "bash"; empty for a text answer
	Args map[string]any // the tool's JSON arguments (nil sends {})
	Text string         // the text answer when Tool is empty
}

// ModelRequest is one HTTP request a client sent to the stand-in.
type ModelRequest struct {
	Method string
	Path   string
	Auth   string         // the Authorization header, e.g. "Bearer KEY"
	Raw    []byte         // the body as sent
	Body   map[string]any // the body decoded, nil when it is not a JSON object
}

// Model is a running stand-in model server. Each chat request that offers
// tools gets the next step of its script; requests without tools get
// TitleText and leave the script where it is; after the last step every
// request with tools gets FinalText, which ends an agent's turn.
type Model struct {
	srv   *http.Server
	url   string
	steps []ModelStep
	args  []string // each step's arguments as JSON

	mu    sync.Mutex
	next  int // the next step to answer
	calls int // chat requests answered
	reqs  []ModelRequest
}

// TB is what StartModel needs of a test (testing.TB has it); the package
// does not import testing, so a program (the network lab's) can serve a
// Model too.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	Failed() bool
}

// New makes the stand-in for the script, not yet serving: it is an
// http.Handler, for a server of the caller's.
func New(steps ...ModelStep) (*Model, error) {
	m := &Model{steps: steps}
	for i, s := range steps {
		b := []byte("{}")
		if s.Args != nil {
			var err error
			if b, err = json.Marshal(s.Args); err != nil {
				return nil, fmt.Errorf("fake model: step %d: the arguments of %s: %w", i+1, s.Tool, err)
			}
		}
		m.args = append(m.args, string(b))
	}
	return m, nil
}

// StartModel serves the script on 127.0.0.1 at a free port until the test
// ends: POST /v1/chat/completions (server-sent events when the request has
// "stream": true, one JSON object otherwise) and GET /v1/models.
func StartModel(t TB, steps ...ModelStep) *Model {
	t.Helper()
	return StartModelOn(t, "127.0.0.1:0", steps...)
}

// StartModelOn is StartModel listening on addr.
func StartModelOn(t TB, addr string, steps ...ModelStep) *Model {
	t.Helper()
	m, err := New(steps...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("fake model: listen on %s: %v", addr, err)
	}
	m.url = "http://" + ln.Addr().String() + "/v1"
	m.srv = &http.Server{Handler: m, ReadHeaderTimeout: 10 * time.Second}
	go m.srv.Serve(ln)
	t.Cleanup(func() {
		m.srv.Close()
		if t.Failed() {
			t.Logf("fake model at %s got:\n%s", m.url, m.Summary())
		}
	})
	return m
}

// URL is the base URL to give a client, http://127.0.0.1:PORT/v1.
func (m *Model) URL() string { return m.url }

// Requests returns every request received so far, in order.
func (m *Model) Requests() []ModelRequest {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]ModelRequest(nil), m.reqs...)
}

// StepsServed is how many script steps have been answered.
func (m *Model) StepsServed() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.next
}

// ToolResults returns the contents of the role "tool" messages clients sent
// back, in the order they first appeared. A client resends the whole
// conversation each time, so each tool_call_id counts once.
func (m *Model) ToolResults() []string {
	var out []string
	seen := map[string]bool{}
	for i, r := range m.Requests() {
		msgs, _ := r.Body["messages"].([]any)
		for j, v := range msgs {
			msg, _ := v.(map[string]any)
			if msg["role"] != "tool" {
				continue
			}
			key, _ := msg["tool_call_id"].(string)
			if key == "" {
				key = fmt.Sprintf("request %d message %d", i, j)
			}
			if !seen[key] {
				seen[key] = true
				out = append(out, contentText(msg["content"]))
			}
		}
	}
	return out
}

// Summary is one line per request: method, path, and for chat requests the
// message roles, the number of tools and whether it streamed.
func (m *Model) Summary() string {
	var b strings.Builder
	for i, r := range m.Requests() {
		fmt.Fprintf(&b, "%d. %s %s", i+1, r.Method, r.Path)
		if r.Body != nil {
			msgs, _ := r.Body["messages"].([]any)
			var roles []string
			for _, v := range msgs {
				msg, _ := v.(map[string]any)
				roles = append(roles, fmt.Sprint(msg["role"]))
			}
			tools, _ := r.Body["tools"].([]any)
			fmt.Fprintf(&b, " stream=%v tools=%d messages=%s", r.Body["stream"], len(tools), strings.Join(roles, ","))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// contentText flattens a message's content: a string, or an array of parts
// whose "text" fields are joined.
func contentText(c any) string {
	switch c := c.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if part, ok := p.(map[string]any); ok {
				s, _ := part["text"].(string)
				b.WriteString(s)
			}
		}
		return b.String()
	case nil:
		return ""
	}
	b, _ := json.Marshal(c)
	return string(b)
}

// ServeHTTP records the request and answers it.
func (m *Model) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		httpError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	req := ModelRequest{Method: r.Method, Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Raw: raw}
	if len(raw) > 0 {
		json.Unmarshal(raw, &req.Body)
	}
	m.mu.Lock()
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()

	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case strings.HasSuffix(path, "/models") && r.Method == http.MethodGet:
		writeJSON(w, map[string]any{"object": "list", "data": []any{
			map[string]any{"id": FakeModelID, "object": "model", "created": 0, "owned_by": "fakes"},
		}})
	case strings.HasSuffix(path, "/chat/completions") && r.Method == http.MethodPost:
		if req.Body == nil {
			httpError(w, http.StatusBadRequest, "the body is not a JSON object")
			return
		}
		m.complete(w, req.Body)
	default:
		httpError(w, http.StatusNotFound, r.Method+" "+r.URL.Path+" is not served by the fake model")
	}
}

// answer is what the stand-in says to one chat request.
type answer struct {
	id, model string
	created   int64
	text      string // when call is nil
	call      *toolCall
}

type toolCall struct{ id, name, args string }

// decide picks the answer: TitleText without tools, else the next step or
// FinalText.
func (m *Model) decide(body map[string]any) answer {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls++
	a := answer{id: fmt.Sprintf("chatcmpl-fake-%d", m.calls), created: time.Now().Unix(), model: FakeModelID}
	if s, _ := body["model"].(string); s != "" {
		a.model = s
	}
	tools, _ := body["tools"].([]any)
	switch {
	case len(tools) == 0:
		a.text = TitleText
	case m.next >= len(m.steps):
		a.text = FinalText
	default:
		step, args := m.steps[m.next], m.args[m.next]
		m.next++
		if step.Tool == "" {
			a.text = step.Text
			break
		}
		a.call = &toolCall{id: fmt.Sprintf("call_fake_%d", m.next), name: step.Tool, args: args}
	}
	return a
}

func (m *Model) complete(w http.ResponseWriter, body map[string]any) {
	a := m.decide(body)
	if stream, _ := body["stream"].(bool); stream {
		a.stream(w)
		return
	}
	msg := map[string]any{"role": "assistant", "content": a.text}
	finish := "stop"
	if a.call != nil {
		msg["content"] = nil
		msg["tool_calls"] = []any{map[string]any{
			"id": a.call.id, "type": "function",
			"function": map[string]any{"name": a.call.name, "arguments": a.call.args},
		}}
		finish = "tool_calls"
	}
	writeJSON(w, map[string]any{
		"id": a.id, "object": "chat.completion", "created": a.created, "model": a.model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   usage(),
	})
}

// stream sends the answer as chat.completion.chunk events: the role, then
// the text or the tool call (its name first, the arguments in pieces, as
// real servers do), then finish_reason with the usage, then [DONE].
func (a answer) stream(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	send := func(delta map[string]any, finish any, extra map[string]any) {
		chunk := map[string]any{
			"id": a.id, "object": "chat.completion.chunk", "created": a.created, "model": a.model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
		for k, v := range extra {
			chunk[k] = v
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		rc.Flush()
	}
	send(map[string]any{"role": "assistant", "content": ""}, nil, nil)
	finish := "stop"
	if c := a.call; c != nil {
		send(map[string]any{"tool_calls": []any{map[string]any{
			"index": 0, "id": c.id, "type": "function",
			"function": map[string]any{"name": c.name, "arguments": ""},
		}}}, nil, nil)
		for _, piece := range pieces(c.args, 24) {
			send(map[string]any{"tool_calls": []any{map[string]any{
				"index": 0, "function": map[string]any{"arguments": piece},
			}}}, nil, nil)
		}
		finish = "tool_calls"
	} else if a.text != "" {
		send(map[string]any{"content": a.text}, nil, nil)
	}
	send(map[string]any{}, finish, map[string]any{"usage": usage()})
	fmt.Fprint(w, "data: [DONE]\n\n")
	rc.Flush()
}

// pieces cuts s into parts of at most n bytes, not splitting a UTF-8
// character.
func pieces(s string, n int) []string {
	var out []string
	for len(s) > 0 {
		k := min(n, len(s))
		for k < len(s) && k > 0 && s[k]&0xC0 == 0x80 {
			k--
		}
		if k == 0 {
			k = len(s)
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

func usage() map[string]any {
	return map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}
