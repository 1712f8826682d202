package taskcmd_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/testkit/testenv"
	"github.com/agents-sandbox/asb/schema"
)

// TestNoSecretInAnyOutput runs every asb command, and asb task with every
// go-task flag it takes on every task (the stand-ins behind them), with
// canary values in the environment and in secrets.env, and a user task
// whose template reads a secret's variable; after each run it looks for
// the canaries in stdout and stderr, and at the end in every file left in
// the outer folder (but secrets.env), in the stand-ins' state and in
// $HOME. A value is never printed, recorded or written.
func TestNoSecretInAnyOutput(t *testing.T) {
	testenv.Slow(t)
	opts := generator.DefaultOptions("opencode", "demo")
	opts.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
	s := newSandbox(t, opts)
	exported := map[string]string{"OPENCODE_API_KEY": "canary-env-opencode-4b1f9e", "GITHUB_TOKEN": "canary-env-github-77d0c3"}
	for k, v := range exported {
		t.Setenv(k, v)
	}
	fileOnly := "canary-file-npm-1e9a52"
	appendTo(t, s.dir, "secrets.env", "NPM_TOKEN="+fileOnly+"\nGITHUB_TOKEN=canary-file-github-a2c4\n")
	appendTo(t, s.dir, "secrets.yaml", "\nNPM_TOKEN: {value: \"${NPM_TOKEN}\", allow: [\"registry.npmjs.org\"]}\n")
	// A user's task that puts a secret's value in a command, and one that
	// fails with it in the command.
	appendTo(t, s.dir, "Taskfile.yml", `
  tmpl:
    desc: a task whose command templates a secret
    dotenv: [secrets.env]
    cmds:
      - 'test -n "{{.OPENCODE_API_KEY}}"'
  tmplfail:
    cmds:
      - 'false "{{.GITHUB_TOKEN}}"'
`)
	canaries := []string{fileOnly, "canary-file-github-a2c4"}
	for _, v := range exported {
		canaries = append(canaries, v)
	}
	check := func(what, out string) {
		t.Helper()
		for _, c := range canaries {
			if strings.Contains(out, c) {
				t.Errorf("asb %s printed the canary %s:\n%s", what, c, out)
			}
		}
	}
	runs := [][]string{
		{"validate"}, {"validate", "--format", "json"}, {"boundary"}, {"boundary", "--format", "json"},
		{"secret", "ls"}, {"network", "show"}, {"mount", "ls"}, {"port", "ls"},
		{"doctor"}, {"doctor", "--format", "json"}, {"doctor", "--boot"}, {"version"},
		{"completion", "bash"}, {"__complete", "task", ""},
		{"task"}, {"task", "--list"},
	}
	tasks := []string{"agent", "image:build", "image:load", "home:create", "vm:create", "vm:start", "vm:exec",
		"status", "logs", "vm:stop", "vm:rm", "tmpl", "tmplfail", "home:reset", "nosuchtask"}
	for _, task := range tasks {
		runs = append(runs,
			[]string{"task", "--summary", task}, []string{"task", "--dry", task}, []string{"task", "--verbose", "--dry", task},
			[]string{"task", "--verbose", "--yes", task}, []string{"task", "--silent", "--yes", task},
			[]string{"task", "--force", "--yes", task}, []string{"task", "-d", s.dir, "--yes", task})
		if task == "vm:exec" {
			runs = append(runs, []string{"task", "--yes", task, "--", "true"})
		}
	}
	runs = append(runs, [][]string{
		{"secret", "add", "EXTRA_TOKEN", "--allow", "extra.example.com"}, {"secret", "rm", "EXTRA_TOKEN"},
		{"network", "allow", "example.com"}, {"network", "deny", "example.com"},
		{"port", "add", "5173:5173"}, {"port", "rm", "5173"}, {"reap-boot", "--remove", s.identity().VM},
	}...)
	for _, args := range runs {
		out, errOut, _ := s.run("", args...)
		check(strings.Join(args, " "), out+errOut)
	}
	// A broken secrets.env and Taskfile: their errors name lines, not values.
	appendTo(t, s.dir, "secrets.env", "this line is "+fileOnly+" broken\n")
	for _, args := range [][]string{{"validate"}, {"task", "agent"}, {"task", "--summary", "agent"}} {
		out, errOut, _ := s.run("", args...)
		check(strings.Join(args, " ")+" (broken secrets.env)", out+errOut)
	}
	for _, root := range []string{s.dir, s.state, os.Getenv("HOME")} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || filepath.Base(p) == "secrets.env" && filepath.Dir(p) == s.dir {
				return nil
			}
			raw, _ := os.ReadFile(p)
			for _, c := range canaries {
				if strings.Contains(string(raw), c) {
					t.Errorf("%s holds the canary %s", p, c)
				}
			}
			return nil
		})
	}
}
