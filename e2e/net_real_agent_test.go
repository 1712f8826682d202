package e2e

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/internal/testkit/fakemodel"
	"github.com/agents-sandbox/asb/internal/testkit/netlab"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
)

// The real agent end to end, in the real image's guest session
// (boot_image_real_test.go) where the host is the nested guest: the lab
// serves the scripted model on OpenCode's provider host, and `asb task
// agent -- run --auto PROMPT` runs the real OpenCode in the real image's
// VM against it, through msb's proxy (docs/boot-network.md).

//go:embed testdata/net/agent.sh
var agentScenario string

//go:embed testdata/net/tls.sh
var agentTLSScript string

// What the model's script has OpenCode write, and where OpenCode's own
// provider (the preset's, "opencode") is pointed: the lab's model on
// opencode.ai, the host the preset allows and binds the key to.
const (
	agentWrote       = "hello from the fake model\n"
	agentModelHost   = "opencode.ai"
	agentModelPrefix = "/zen/v1/"
)

// agentLab writes what the agent's part of the session needs: the lab with
// the scripted model (a write; then "done", which ends the run), the
// agent's config pointed at it, and the scenario (net/agent.sh, which realimage.sh sources).
func agentLab(t *testing.T, g *testenv.Guest, dir string) {
	t.Helper()
	g.WriteFile(t, "bin/netlab", testenv.StaticNetlab(t), 0o755)
	netLabFiles(t, g, &netlab.Model{Host: agentModelHost, Prefix: agentModelPrefix, Log: "/data/net/run/model.json",
		Steps: []fakemodel.ModelStep{
			{Tool: "write", Args: map[string]any{"filePath": "/workspace/hello.txt", "content": agentWrote}},
		}}, canaryOpenCode)
	g.WriteFile(t, "net/opencode.json", agentConfig(t, dir), 0o644)
	g.WriteFile(t, "net/tls.sh", []byte(agentTLSScript), 0o644)
	g.WriteFile(t, "net/agent.sh", []byte(agentScenario), 0o644)
	if os.Getenv("ASB_NET_DEMO") == "break" {
		g.WriteFile(t, "net/sandbox.yaml", []byte(agentBroken(t, dir)), 0o644)
		t.Log("ASB_NET_DEMO=break: opencode.ai taken out of the folder's network.allow before the agent runs")
	}
}

// agentBroken is the folder's sandbox.yaml with another lab name in place
// of opencode.ai, its only entry: taken out, the list would be empty, and
// a network with no allow list is no policy, which msb (and asb network
// check) take for its default, the public internet.
func agentBroken(t *testing.T, dir string) string {
	t.Helper()
	const other = "    - \"api.github.com\"\n"
	return strings.Replace(netBroken(t, dir), "  allow:\n", "  allow:\n"+other, 1)
}

// agentConfig is the folder's opencode/opencode.json as a user would edit
// it: the preset's provider ("opencode", its key from OPENCODE_API_KEY)
// with an OpenAI-compatible base URL on its host and the model to use.
func agentConfig(t *testing.T, dir string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "opencode", "opencode.json"))
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatalf("the preset's opencode.json: %v", err)
	}
	p, _ := c["provider"].(map[string]any)
	oc, _ := p["opencode"].(map[string]any)
	opts, _ := oc["options"].(map[string]any)
	if opts == nil || opts["apiKey"] != "{env:OPENCODE_API_KEY}" {
		t.Fatalf("the preset's opencode.json has no provider opencode with the key's reference:\n%s", raw)
	}
	opts["baseURL"] = "https://" + agentModelHost + strings.TrimSuffix(agentModelPrefix, "/")
	oc["npm"] = "@ai-sdk/openai-compatible"
	oc["models"] = map[string]any{fakemodel.FakeModelID: map[string]any{
		"name": "Fake", "tool_call": true, "limit": map[string]any{"context": 32000, "output": 4096}}}
	c["model"] = "opencode/" + fakemodel.FakeModelID
	c["small_model"] = c["model"]
	out, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// agentSkipEnv=1 leaves the agent out of the real image's session: its
// one `opencode run` takes minutes under emulation (docs/boot-network.md).
const agentSkipEnv = "ASB_SKIP_AGENT_E2E"

// agentSession is the real image's session where the agent ran.
func agentSession(t *testing.T) *testenv.Session {
	t.Helper()
	s, lab := realImageRun(t)
	switch {
	case lab:
		return s
	case os.Getenv(agentSkipEnv) != "":
		t.Skipf("%s=1: the agent's end to end left out", agentSkipEnv)
	default:
		t.Skip("the network lab runs only in the nested guest (this host boots by itself)")
	}
	return nil
}

// agentRequests are the requests opencode.ai received before the agent's
// run (Node.js's and Bun's, agent_tls) and from it.
func agentRequests(t *testing.T, s *testenv.Session) (before, after []netlab.Request) {
	t.Helper()
	reqs, err := netlab.ReadRequests([]byte(ok(t, s, "agent_requests")))
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(s.Notes["agent_requests_before"])
	if err != nil {
		t.Fatalf("the note agent_requests_before: %q", s.Notes["agent_requests_before"])
	}
	for i, r := range reqs {
		switch {
		case r.Host != agentModelHost:
		case i < n:
			before = append(before, r)
		default:
			after = append(after, r)
		}
	}
	return before, after
}

// agentModel are the requests of reqs that the model answered.
func agentModel(reqs []netlab.Request) []netlab.Request {
	var out []netlab.Request
	for _, r := range reqs {
		if strings.HasPrefix(r.Path, agentModelPrefix) {
			out = append(out, r)
		}
	}
	return out
}

// agentKeys says what each request's Authorization held, without a value:
// "real" (secrets.env's value), or what else it was.
func agentKeys(reqs []netlab.Request) []string {
	var out []string
	for _, r := range reqs {
		a := strings.Join(r.Header["Authorization"], ",")
		if a == "Bearer "+canaryOpenCode {
			a = "real"
		} else {
			a = strings.ReplaceAll(a, canaryOpenCode, "<the value, not as a bearer token>")
		}
		out = append(out, r.Path+": "+a)
	}
	return out
}

// agentWhy is what the session says about the agent's requests: asb
// network log's lines for the model host, and the end of what OpenCode
// printed.
func agentWhy(s *testenv.Session, step string) string {
	return "\nasb network log:" + netLogLines(s, "agent", agentModelHost) +
		"\n" + step + ": " + s.Steps[step].Why() + agentOwnLog(s)
}

// agentOwnLog is the end of OpenCode's own log of the run and of what msb
// and the VM's kernel said (steps agent_own_log, agent_vm_log).
func agentOwnLog(s *testenv.Session) string {
	var b strings.Builder
	for _, n := range []string{"agent_own_log", "agent_vm_log"} {
		if st, ran := s.Steps[n]; ran {
			fmt.Fprintf(&b, "\n%s (the end):\n%s", n, lastLines(st.Out+st.Err, 25))
		}
	}
	return b.String()
}

// TestRealNetAgentEndToEnd: `asb task agent -- run --auto PROMPT` runs the
// real OpenCode in the real image's VM; its requests reach the model on
// opencode.ai through msb's proxy with the real key from secrets.env in
// Authorization (the VM holds a placeholder); the model's tool call has
// OpenCode write a file in /workspace, which is in workspace/ on the host;
// and no value is in msb's files on the host or in workspace/.
func TestRealNetAgentEndToEnd(t *testing.T) {
	s := agentSession(t)
	ok(t, s, "agent_trust")
	run := s.Step(t, "agent_run")
	_, after := agentRequests(t, s)
	model := agentModel(after)
	if len(model) == 0 {
		t.Fatalf("the model at https://%s%s received no request (asb task agent: exit %d)%s",
			agentModelHost, agentModelPrefix, run.Code, agentWhy(s, "agent_run"))
	}
	for i, k := range agentKeys(model) {
		if !strings.HasSuffix(k, ": real") {
			t.Errorf("the model's request %d had Authorization %q, want the real value in secrets.env", i+1, k)
		}
	}
	if run.Code != 0 {
		t.Fatalf("asb task agent -- run --auto: exit %d%s", run.Code, agentWhy(s, "agent_run"))
	}
	if got := ok(t, s, "agent_file"); got != agentWrote {
		t.Errorf("workspace/hello.txt on the host: %q, want %q", got, agentWrote)
	}
	var rep netlab.ModelReport
	if err := json.Unmarshal([]byte(ok(t, s, "agent_model")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.ToolResults) != 1 || !strings.Contains(rep.ToolResults[0], "Wrote file successfully") {
		t.Errorf("OpenCode's result of the write: %q\nthe model got:\n%s", rep.ToolResults, rep.Summary)
	}
	if out := strings.TrimSpace(ok(t, s, "agent_no_value")); out != "" {
		t.Errorf("files on the host (MSB_HOME, TMPDIR, workspace/) holding a secret's value:\n%s", out)
	}
	t.Logf("the agent's run: %.1f s; the model got %d requests in %.1f s (%s)%s",
		run.Secs, len(model), model[len(model)-1].Time.Sub(model[0].Time).Seconds(), strings.Join(agentKeys(model), "; "), agentOwnLog(s))
}

// TestRealNetAgentTLS: in the real image's VM, Node.js and Bun (the
// opencode binary run as bun) accept msb's interception certificate for
// opencode.ai: each fetch reaches the lab's server, Node.js's signed by
// msb's CA, with secrets.env's value where the VM sent its placeholder.
func TestRealNetAgentTLS(t *testing.T) {
	s := agentSession(t)
	st := s.Step(t, "agent_tls")
	want := []string{`node 200 "microsandbox CA" netlab opencode.ai /tls/node`, "bun 200 netlab opencode.ai /tls/bun"}
	got := strings.Split(strings.TrimSpace(st.Out), "\n")
	if st.Code != 0 || len(got) != 3 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Node.js and Bun fetching https://opencode.ai/ in the VM (exit %d):\n%s%s\nwant:\n%s\nasb network log:%s",
			st.Code, st.Out, st.Err, strings.Join(want, "\n"), netLogLines(s, "agent", agentModelHost))
	}
	before, _ := agentRequests(t, s)
	for _, path := range []string{"/tls/node", "/tls/bun"} {
		if r, found := netRequest(before, agentModelHost, path); !found {
			t.Errorf("no request reached %s%s%s", agentModelHost, path, agentWhy(s, "agent_tls"))
		} else if k := agentKeys([]netlab.Request{r}); k[0] != path+": real" {
			t.Errorf("%s, want secrets.env's value (the VM holds its placeholder)", k[0])
		}
	}
	t.Logf("in the real image's VM: %s", strings.Join(got, " | "))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
