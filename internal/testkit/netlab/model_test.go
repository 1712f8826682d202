package netlab

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/fakemodel"
)

// With a Model, the lab answers its host's requests under the prefix with
// the script (recorded like any other, headers included), anything else
// with its own answer, and keeps a report of what the model saw.
func TestModelOnALabName(t *testing.T) {
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "requests.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	c := &Config{Model: &Model{Host: "opencode.ai", Prefix: "/zen/v1/", Log: filepath.Join(dir, "model.json"),
		Steps: []fakemodel.ModelStep{{Tool: "write", Args: map[string]any{"filePath": "/workspace/x"}}}}}
	h, err := c.handler(&recorder{out: f})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	send := func(host, path, body string) string {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Host = host
		req.Header.Set("Authorization", "Bearer k-1")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	chat := `{"model":"fake-model","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"a","content":"wrote it"}],"tools":[{"type":"function"}]}`
	if got := send("opencode.ai:443", "/zen/v1/chat/completions", chat); !strings.Contains(got, `"name":"write"`) {
		t.Errorf("the model's answer: %s", got)
	}
	if got := send("opencode.ai", "/secret/x", ""); got != "netlab opencode.ai /secret/x\n" {
		t.Errorf("another path of the model's host: %q", got)
	}
	if got := send("api.github.com", "/zen/v1/chat/completions", chat); !strings.HasPrefix(got, "netlab ") {
		t.Errorf("the prefix on another host: %q", got)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	reqs, err := ReadRequests(raw)
	if err != nil || len(reqs) != 3 || reqs[0].Header["Authorization"][0] != "Bearer k-1" {
		t.Fatalf("recorded %+v, %v", reqs, err)
	}
	var rep ModelReport
	raw, _ = os.ReadFile(filepath.Join(dir, "model.json"))
	if err := json.Unmarshal(raw, &rep); err != nil || rep.Requests != 1 || rep.StepsServed != 1 ||
		len(rep.ToolResults) != 1 || rep.ToolResults[0] != "wrote it" {
		t.Errorf("the model's report %s: %+v, %v", raw, rep, err)
	}
}
