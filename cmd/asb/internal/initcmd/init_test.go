package initcmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

func factory(wd string) (*cmdutil.Factory, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &cmdutil.Factory{
		IO:        &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut},
		Templates: templates.FS,
		Getwd:     func() (string, error) { return wd, nil },
		Getenv:    func(string) string { return "" },
	}, &out, &errOut
}

// parse runs the command line through NewCmd and returns the options the
// run function would get.
func parse(t *testing.T, args ...string) (*Options, error) {
	t.Helper()
	f, _, _ := factory(t.TempDir())
	var got *Options
	cmd := NewCmd(f, func(_ context.Context, o *Options) error { got = o; return nil })
	cmd.SetArgs(args)
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	err := cmd.Execute()
	return got, err
}

func TestFlagsReachOptions(t *testing.T) {
	o, err := parse(t, "--agent", "opencode", "--name", "demo", "--cpus", "4", "--memory", "8G",
		"--secret", "GITHUB_TOKEN@api.github.com,github.com", "--secret", "NPM_TOKEN@registry.npmjs.org",
		"--network", "public", "--allow", "pypi.org", "--allow", "*.example.com", "--port", "5173:5173",
		"--workspace", "https://github.com/me/app.git", "--base-image", "ubuntu:24.04", "--agent-version", "1.2.3",
		"--dry-run", "--force", "--no-git", "outer")
	if err != nil {
		t.Fatal(err)
	}
	want := schema.InitOptions{
		Agent: "opencode", Name: "demo", CPUs: 4, Memory: "8G", Network: "public",
		Allow: []string{"pypi.org", "*.example.com"}, Ports: []string{"5173:5173"},
		Workspace: "https://github.com/me/app.git", BaseImage: "ubuntu:24.04", AgentVersion: "1.2.3",
	}
	if diff := cmp.Diff(want, o.Init); diff != "" {
		t.Errorf("InitOptions (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"GITHUB_TOKEN@api.github.com,github.com", "NPM_TOKEN@registry.npmjs.org"}, o.Secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	if o.Dir != "outer" || !o.DryRun || !o.Force || !o.NoGit {
		t.Errorf("Dir/DryRun/Force/NoGit = %q/%v/%v/%v", o.Dir, o.DryRun, o.Force, o.NoGit)
	}

	o, err = parse(t, "--agent", "opencode")
	if err != nil {
		t.Fatal(err)
	}
	def := schema.InitOptions{Agent: "opencode", CPUs: 2, Memory: "4G", Network: "allow", BaseImage: "debian:trixie-slim"}
	if diff := cmp.Diff(def, o.Init); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestFlagMistakesAreOneUsageLine(t *testing.T) {
	for _, args := range [][]string{
		{"--agent", "opencode", "--bogus"},
		{"--agent", "opencode", "--cpus", "many"},
		{"--agent", "opencode", "--no-git=maybe"},
		{"--agent"},
		{"--agent", "opencode", "a", "b"},
	} {
		_, err := parse(t, args...)
		var ue *cmdutil.UsageError
		if !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a UsageError", args, err)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, "\n") || strings.Contains(msg, "strconv") || !strings.Contains(msg, "init --help") {
			t.Errorf("%q: %q is not one plain line with the help hint", args, msg)
		}
	}
}

// run runs init in-process with git as given (nil: --no-git).
func run(t *testing.T, wd string, git *runner.Git, args ...string) (string, error) {
	t.Helper()
	f, out, _ := factory(wd)
	cmd := NewCmd(f, func(ctx context.Context, o *Options) error {
		if git == nil {
			o.NoGit = true
		} else {
			o.Git = *git
		}
		return Run(ctx, o)
	})
	cmd.SetArgs(args)
	cmd.SetOut(out)
	cmd.SetErr(out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestRunReportsEveryEntry(t *testing.T) {
	wd := t.TempDir()
	out, err := run(t, wd, nil, "--agent", "opencode", "demo")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"create          0755  opencode/\n",
		"create          0600  secrets.env\n",
		"create          0644  toolchain/Dockerfile\n",
		"create          0755  workspace/\n",
		"\nNext:\n  cd demo\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	if _, err := os.Stat(filepath.Join(wd, "demo", ".git")); !os.IsNotExist(err) {
		t.Error("--no-git made a repository")
	}
	// A DIR with a space is quoted in the next steps.
	out, err = run(t, wd, nil, "--agent", "opencode", "--name", "spaced", "my proj")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "  cd 'my proj'\n") {
		t.Errorf("next steps do not quote the folder:\n%s", out)
	}
}

func TestMissingGitWritesNothing(t *testing.T) {
	wd := t.TempDir()
	git := &runner.Git{Bin: filepath.Join(wd, "no-such-git")}
	_, err := run(t, wd, git, "--agent", "opencode", "demo")
	if err == nil || !strings.Contains(err.Error(), "git is not installed") || !strings.Contains(err.Error(), "--no-git") {
		t.Fatalf("err = %v, want git is not installed … --no-git", err)
	}
	if entries, _ := os.ReadDir(wd); len(entries) != 0 {
		t.Errorf("a run without git wrote %v", entries)
	}
}

// A failure after the files are written (git init) removes every folder
// the run created, parents included.
func TestGitInitFailureUndoesTheRun(t *testing.T) {
	wd := t.TempDir()
	bin := filepath.Join(wd, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	fake := filepath.Join(bin, "git")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho 'fatal: disk full' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := run(t, wd, &runner.Git{Bin: fake}, "--agent", "opencode", "--name", "demo", "new/parent/outer")
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v, want git's failure", err)
	}
	if _, err := os.Lstat(filepath.Join(wd, "new")); !os.IsNotExist(err) {
		t.Errorf("the folders made by a failed run are still there (%v)", err)
	}
}

func TestCloneErrorIsOneLine(t *testing.T) {
	te := &runner.ToolError{
		Cmd:    []string{"git", "clone", "--quiet", "--", "https://x/y.git", "/tmp/.asb-clone-1/workspace"},
		Code:   128,
		Output: "fatal: repository 'https://x/y.git/' not found\nhint: check the URL\n",
		Err:    &exec.ExitError{},
	}
	err := error(&cloneError{src: "https://x/y.git", err: te})
	want := "--workspace: git clone https://x/y.git failed: fatal: repository 'https://x/y.git/' not found"
	if err.Error() != want {
		t.Errorf("Error() = %q, want %q", err, want)
	}
	if got := cmdutil.ExitCode(err); got != 1 {
		t.Errorf("exit code %d, want 1 (not git's 128)", got)
	}
	var back *runner.ToolError
	if !errors.As(err, &back) {
		t.Error("the ToolError is not reachable with errors.As")
	}
}

func TestCheckWorkspaceArg(t *testing.T) {
	for _, ok := range []string{"", "https://github.com/me/app.git", "git@github.com:me/app.git", "ssh://git@host/x.git", "../app", "/srv/app"} {
		if err := checkWorkspaceArg(ok); err != nil {
			t.Errorf("checkWorkspaceArg(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"https://me:ghp_abc123@github.com/me/app.git", "https://x:@h/y", "app\nrm", "a\x1bb"} {
		err := checkWorkspaceArg(bad)
		if err == nil {
			t.Errorf("checkWorkspaceArg(%q) accepted it", bad)
			continue
		}
		if strings.Contains(err.Error(), "ghp_abc123") {
			t.Errorf("the error echoes the token: %v", err)
		}
	}
}

func TestSuggestName(t *testing.T) {
	for in, want := range map[string]string{
		"Bad_Dir": "bad-dir", "My Project!": "my-project", "___": "my-project", "ok-1": "ok-1",
		strings.Repeat("a", 80): strings.Repeat("a", 63), "Ünïcode": "n-code",
		"2048": "project-2048", "x-": "x",
	} {
		got := suggestName(in)
		if got != want {
			t.Errorf("suggestName(%q) = %q, want %q", in, got, want)
		}
		if re := schema.ProjectName(got); re != nil {
			t.Errorf("suggestName(%q) = %q, which is not a valid name: %v", in, got, re)
		}
	}
}

func TestLooksLikeURL(t *testing.T) {
	for s, want := range map[string]bool{
		"https://github.com/a/b": true, "file:///srv/x": true, "git@github.com:a/b.git": true,
		"ssh://git@h/x": true, "./app": false, "/srv/app": false, "app": false, "/srv/a@b:c": false,
	} {
		if got := looksLikeURL(s); got != want {
			t.Errorf("looksLikeURL(%q) = %v, want %v", s, got, want)
		}
	}
}

// init refuses a name the Kubernetes export could not use (a trailing
// dash, a leading digit: the API server takes only DNS labels), by --name
// and by the folder's name, and says the rule; nothing is written.
func TestNamesTheExportCannotUseAreRefused(t *testing.T) {
	const rule = "starting with a letter and ending with a letter or digit"
	for _, args := range [][]string{
		{"--agent", "opencode", "--name", "x-", "out"},
		{"--agent", "opencode", "--name", "1demo", "out"},
		{"--agent", "opencode", "2048"},
		{"--agent", "opencode", "--name", strings.Repeat("a", 64), "out"},
	} {
		wd := t.TempDir()
		_, err := run(t, wd, nil, args...)
		if err == nil || !strings.Contains(err.Error(), rule) {
			t.Errorf("%v: %v; want a refusal saying %q", args, err, rule)
		}
		if entries, _ := os.ReadDir(wd); len(entries) > 0 {
			t.Errorf("%v wrote %v", args, entries)
		}
	}
}
