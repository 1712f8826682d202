package fakemodel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// someTools is a tools array like the one OpenCode sends.
var someTools = []any{map[string]any{"type": "function", "function": map[string]any{
	"name": "write", "description": "Write a file",
	"parameters": map[string]any{"type": "object", "properties": map[string]any{
		"filePath": map[string]any{"type": "string"}, "content": map[string]any{"type": "string"},
	}},
}}}

func chatBody(stream bool, tools []any, msgs ...map[string]any) map[string]any {
	b := map[string]any{"model": "fake-model", "messages": msgs, "stream": stream}
	if stream {
		b["stream_options"] = map[string]any{"include_usage": true}
	}
	if tools != nil {
		b["tools"], b["tool_choice"] = tools, "auto"
	}
	return b
}

func user(s string) map[string]any { return map[string]any{"role": "user", "content": s} }

func post(t *testing.T, m *Model, body map[string]any) *http.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, m.URL()+"/chat/completions", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer test-key")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// streamed is a streamed answer put back together, as a client would.
type streamed struct {
	role, content, finish string
	callID, callType      string
	name, args            string
	usage                 map[string]any
	done                  bool // [DONE] came last
}

// readStream parses the SSE body the way @ai-sdk/openai-compatible does:
// "data: " lines, choices[0].delta, tool_calls pieces joined by index.
func readStream(t *testing.T, resp *http.Response) streamed {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q, want text/event-stream", ct)
	}
	var s streamed
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || s.done {
			t.Fatalf("unexpected line %q (after [DONE]: %v)", line, s.done)
		}
		if data == "[DONE]" {
			s.done = true
			continue
		}
		var chunk struct {
			Object  string `json:"object"`
			Choices []struct {
				Delta struct {
					Role      string `json:"role"`
					Content   string `json:"content"`
					ToolCalls []struct {
						Index    *int   `json:"index"`
						ID       string `json:"id"`
						Type     string `json:"type"`
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal([]byte(data), &chunk); err != nil {
			t.Fatalf("chunk %q: %v", data, err)
		}
		if chunk.Object != "chat.completion.chunk" || len(chunk.Choices) != 1 {
			t.Fatalf("chunk %q: want one choice of a chat.completion.chunk", data)
		}
		if chunk.Usage != nil {
			s.usage = chunk.Usage
		}
		c := chunk.Choices[0]
		if c.FinishReason != nil {
			s.finish = *c.FinishReason
		}
		s.role += c.Delta.Role
		s.content += c.Delta.Content
		for _, tc := range c.Delta.ToolCalls {
			if tc.Index == nil || *tc.Index != 0 {
				t.Fatalf("chunk %q: tool call without index 0", data)
			}
			s.callID += tc.ID
			s.callType += tc.Type
			s.name += tc.Function.Name
			s.args += tc.Function.Arguments
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestModelStreamsToolCallThenText(t *testing.T) {
	m := StartModel(t,
		ModelStep{Tool: "write", Args: map[string]any{"filePath": "/w/hello.txt", "content": "hello wörld, a long enough text to be cut\n"}},
		ModelStep{Text: "wrote it"},
	)
	s := readStream(t, post(t, m, chatBody(true, someTools, user("create hello.txt"))))
	want := streamed{role: "assistant", finish: "tool_calls", callID: "call_fake_1", callType: "function", name: "write", done: true}
	var args map[string]any
	if err := json.Unmarshal([]byte(s.args), &args); err != nil {
		t.Fatalf("arguments %q: %v", s.args, err)
	}
	if args["content"] != "hello wörld, a long enough text to be cut\n" || args["filePath"] != "/w/hello.txt" {
		t.Errorf("arguments %v", args)
	}
	if s.usage["total_tokens"] == nil {
		t.Errorf("no usage in the stream")
	}
	gotArgs := s.args
	s.args, s.usage = "", nil
	if diff := cmp.Diff(want, s, cmp.AllowUnexported(streamed{})); diff != "" {
		t.Errorf("first answer (-want +got):\n%s", diff)
	}

	call := map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
		"id": "call_fake_1", "type": "function", "function": map[string]any{"name": "write", "arguments": gotArgs},
	}}}
	result := map[string]any{"role": "tool", "tool_call_id": "call_fake_1", "content": "Wrote file successfully."}
	for _, text := range []string{"wrote it", FinalText, FinalText} {
		s = readStream(t, post(t, m, chatBody(true, someTools, user("create hello.txt"), call, result)))
		if s.content != text || s.finish != "stop" || s.name != "" || !s.done {
			t.Errorf("got %+v, want the text %q and finish stop", s, text)
		}
	}
	if got := m.ToolResults(); !cmp.Equal(got, []string{"Wrote file successfully."}) {
		t.Errorf("ToolResults %q", got)
	}
	if r := m.Requests(); len(r) != 4 || r[0].Auth != "Bearer test-key" || r[0].Path != "/v1/chat/completions" {
		t.Errorf("requests %+v", r)
	}
}

func TestModelAnswersPlainJSON(t *testing.T) {
	m := StartModel(t, ModelStep{Tool: "bash", Args: map[string]any{"command": "ls -a /"}})
	var got struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				ToolCalls []struct {
					ID, Type string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage map[string]int `json:"usage"`
	}
	for i, want := range []string{"tool_calls", "stop"} {
		resp := post(t, m, chatBody(false, someTools, user("list /")))
		if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
			t.Fatalf("Content-Type %q", ct)
		}
		got.Choices = nil
		if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
			t.Fatal(err)
		}
		if got.Object != "chat.completion" || len(got.Choices) != 1 || got.Choices[0].FinishReason != want || got.Usage["total_tokens"] == 0 {
			t.Fatalf("answer %d: %+v", i+1, got)
		}
	}
	msg := got.Choices[0].Message
	if msg.Role != "assistant" || msg.Content == nil || *msg.Content != FinalText || len(msg.ToolCalls) != 0 {
		t.Errorf("last answer %+v, want the text %q", msg, FinalText)
	}
	resp := post(t, StartModel(t, ModelStep{Tool: "bash", Args: map[string]any{"command": "ls -a /"}}), chatBody(false, someTools, user("list /")))
	got.Choices = nil
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	calls := got.Choices[0].Message.ToolCalls
	if len(calls) != 1 || calls[0].Type != "function" || calls[0].Function.Name != "bash" || calls[0].Function.Arguments != `{"command":"ls -a /"}` {
		t.Errorf("tool call %+v", calls)
	}
}

func TestModelTitleRequestsDoNotAdvanceTheScript(t *testing.T) {
	m := StartModel(t, ModelStep{Text: "first step"})
	for _, stream := range []bool{true, false, true} {
		resp := post(t, m, chatBody(stream, nil, map[string]any{"role": "system", "content": "You are a title generator."}, user("create hello.txt")))
		var text string
		if stream {
			text = readStream(t, resp).content
		} else {
			var got struct {
				Choices []struct{ Message struct{ Content string } }
			}
			json.NewDecoder(resp.Body).Decode(&got)
			text = got.Choices[0].Message.Content
		}
		if text != TitleText || m.StepsServed() != 0 {
			t.Fatalf("title answer %q after %d steps, want %q and none", text, m.StepsServed(), TitleText)
		}
	}
	if s := readStream(t, post(t, m, chatBody(true, someTools, user("go")))); s.content != "first step" || m.StepsServed() != 1 {
		t.Errorf("got %q after the titles, want the first step", s.content)
	}
}

func TestModelToolResultsCountEachCallOnce(t *testing.T) {
	m := StartModel(t)
	r1 := map[string]any{"role": "tool", "tool_call_id": "a", "content": "one"}
	r2 := map[string]any{"role": "tool", "tool_call_id": "b", "content": []any{
		map[string]any{"type": "text", "text": "tw"}, map[string]any{"type": "text", "text": "o"},
	}}
	post(t, m, chatBody(false, someTools, user("x"), r1))
	post(t, m, chatBody(false, someTools, user("x"), r1, r2))
	if got := m.ToolResults(); !cmp.Equal(got, []string{"one", "two"}) {
		t.Errorf("ToolResults %q, want [one two]", got)
	}
}

func TestModelListsModelsAndRefusesTheRest(t *testing.T) {
	m := StartModel(t)
	resp, err := http.Get(m.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil || len(list.Data) != 1 || list.Data[0].ID != FakeModelID {
		t.Errorf("GET /models: %+v, %v", list, err)
	}
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/chat/completions", ""}, {"POST", "/embeddings", "{}"}, {"POST", "/chat/completions", "not json"},
	} {
		req, _ := http.NewRequest(c.method, m.URL()+c.path, strings.NewReader(c.body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("%s %s %q: status %d, want an error", c.method, c.path, c.body, resp.StatusCode)
		}
	}
	if n := len(m.Requests()); n != 4 {
		t.Errorf("%d requests recorded, want 4", n)
	}
}

func TestPiecesKeepUTF8Whole(t *testing.T) {
	s := strings.Repeat("aé€😀", 20)
	got := pieces(s, 5)
	if strings.Join(got, "") != s {
		t.Fatal("pieces lost bytes")
	}
	for _, p := range got {
		if len(p) > 5 || !json.Valid([]byte(`"`+p+`"`)) || strings.ToValidUTF8(p, "?") != p {
			t.Errorf("piece %q", p)
		}
	}
}

// New refuses a step whose arguments are not JSON, saying which step.
func TestNewRefusesArgumentsThatAreNotJSON(t *testing.T) {
	_, err := New(ModelStep{Text: "hi"}, ModelStep{Tool: "write", Args: map[string]any{"bad": make(chan int)}})
	if err == nil || !strings.Contains(err.Error(), "step 2") || !strings.Contains(err.Error(), "write") {
		t.Fatalf("New: %v, want an error naming step 2 and its tool", err)
	}
}
