package e2e

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	asbouter "github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// TestRealMSBSessionWorkspace: the real msb accepts a session's derived
// config (asb session new) and shows the session's checkout as /workspace,
// and the session's own host port for the port the folder forwards; the
// same polling as the other real-msb tests (inspectable while Starting).
func TestRealMSBSessionWorkspace(t *testing.T) {
	msb := testenv.MSB(t)
	podman := testenv.Podman(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	o := newOuter(t, ctx)
	env := testenv.MSBEnv(t)
	msbHome := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MSB_HOME="); ok {
			msbHome = v
		}
	}
	env = testenv.WithEnv(env, "OPENCODE_API_KEY="+canaryOpenCode, "GITHUB_TOKEN="+canaryGitHub)

	ws := filepath.Join(o.dir, "workspace")
	gitEnv := testenv.WithEnv(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
		testenv.Run(t, ctx, ws, gitEnv, append([]string{"git"}, args...)...)
	}
	f, err := asbouter.Open(o.dir, asbouter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.AddPort("5173:5173"); err != nil {
		t.Fatal(err)
	}
	s, _, err := asbouter.NewSession(ctx, f, asbouter.NewSessionOptions{Name: "one", Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	sessionPort := s.Ports["5173:5173"]

	quoted := make([]string, len(podman))
	for i, a := range podman {
		quoted[i] = generator.ShellQuote(a)
	}
	overrides := map[string]string{
		"BUILDER": strings.Join(quoted, " "), "BUILD_ARGS": strings.Join(testenv.PodmanBuildArgs(), " "),
		"ASB": asbStub(t), "VM": s.VM, "HOME_VOLUME": s.HomeVolume,
		"SANDBOX_CONF": s.Paths.Conf, "WORKSPACE": "./" + s.Paths.Workspace,
	}
	t.Cleanup(func() {
		_, _, _ = testenv.RunErr(context.Background(), o.dir, env, nil, msb, "remove", "--force", "--quiet", s.VM)
	})
	for _, task := range []string{"image:build", "image:load", "home:create"} {
		if _, err := o.task(t, ctx, task, env, overrides); err != nil {
			t.Fatal(err)
		}
	}
	raw := bootAndInspect(t, ctx, o, env, overrides, msb, msbHome, s.VM)
	var in runner.Inspected
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatalf("msb inspect: %v\n%s", err, raw)
	}
	// msb joins a relative path to the config's folder without cleaning it
	// (.asb/sessions/one/./workspace): the same folder.
	binds := map[string]string{}
	for _, m := range in.Config.Mounts {
		if m.Type == "Bind" {
			binds[m.Guest] = filepath.Clean(m.Host)
		}
	}
	for guest, want := range map[string]string{
		"/workspace":                 filepath.Join(o.dir, filepath.FromSlash(s.Paths.Workspace)),
		"/home/dev/.config/opencode": filepath.Join(o.dir, "opencode"),
	} {
		if binds[guest] != want {
			t.Errorf("msb shows %q as %s, want %q\n%s", binds[guest], guest, want, raw)
		}
	}
	hostPort, _, _ := strings.Cut(sessionPort, ":")
	if sessionPort == "" || !strings.Contains(string(raw), hostPort) || hostPort == "5173" {
		t.Errorf("msb inspect does not show the session's host port %q\n%s", sessionPort, raw)
	}
}
