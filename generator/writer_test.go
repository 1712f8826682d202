package generator_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// node is one entry of a folder as the writer tests compare it.
type node struct {
	Mode    string
	Content string
	Link    string
	MTime   time.Time
}

// snapshot reads every entry under root (hidden ones, temporary files and
// .asb/ included). With mtimes, a rewrite with equal content also shows.
func snapshot(t *testing.T, root string, mtimes bool) map[string]node {
	t.Helper()
	out := map[string]node{}
	if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
		return out
	}
	err := filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		n := node{Mode: fi.Mode().String()}
		if mtimes && !fi.IsDir() {
			n.MTime = fi.ModTime()
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			n.Link, _ = os.Readlink(p)
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			n.Content = string(b)
		}
		out[filepath.ToSlash(rel)] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, before, after map[string]node) {
	t.Helper()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("%s changed the folder (-before +after):\n%s", what, diff)
	}
}

func actions(changes []generator.Change) map[string]generator.Action {
	out := map[string]generator.Action{}
	for _, c := range changes {
		out[c.Path] = c.Action
	}
	return out
}

// allAs maps every path of p to act, with the exceptions given.
func allAs(p *generator.Plan, act generator.Action, except map[string]generator.Action) map[string]generator.Action {
	out := map[string]generator.Action{}
	for _, f := range p.Files {
		out[f.Path] = act
		if a, ok := except[f.Path]; ok {
			out[f.Path] = a
		}
	}
	return out
}

func apply(t *testing.T, root string, p *generator.Plan, o generator.WriteOptions) []generator.Change {
	t.Helper()
	ch, err := generator.Apply(context.Background(), root, p, o)
	if err != nil {
		t.Fatalf("Apply(%+v): %v", o, err)
	}
	return ch
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestApplyCreatesThePlan(t *testing.T) {
	root := filepath.Join(t.TempDir(), "new", "outer")
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	ch := apply(t, root, p, generator.WriteOptions{})
	if diff := cmp.Diff(allAs(p, generator.Create, nil), actions(ch)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	got := snapshot(t, root, false)
	want := map[string]node{".": {Mode: "drwxr-xr-x"}, ".asb": {Mode: "drwxr-xr-x"}}
	for _, f := range p.Files {
		if f.Dir {
			want[f.Path] = node{Mode: "drwxr-xr-x"}
		} else {
			want[f.Path] = node{Mode: f.Mode.String(), Content: string(f.Content)}
		}
	}
	man := got[generator.ManifestPath]
	delete(got, generator.ManifestPath)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tree (-plan +disk):\n%s", diff)
	}
	if got["secrets.env"].Mode != "-rw-------" {
		t.Errorf("secrets.env mode %s, want -rw-------", got["secrets.env"].Mode)
	}
	if !strings.Contains(man.Content, `"sandbox.yaml": "`) {
		t.Errorf("manifest does not record sandbox.yaml:\n%s", man.Content)
	}
}

func TestDryRunWritesNothing(t *testing.T) {
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	t.Run("new folder", func(t *testing.T) {
		root := filepath.Join(t.TempDir(), "outer")
		ch := apply(t, root, p, generator.WriteOptions{DryRun: true})
		if diff := cmp.Diff(allAs(p, generator.Create, nil), actions(ch)); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
		if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("dry run created %s (%v)", root, err)
		}
		if entries, _ := os.ReadDir(filepath.Dir(root)); len(entries) != 0 {
			t.Errorf("dry run left %v in the parent", entries)
		}
	})
	t.Run("existing folder", func(t *testing.T) {
		root := t.TempDir()
		apply(t, root, p, generator.WriteOptions{})
		write(t, filepath.Join(root, "README.md"), "mine\n")
		if err := os.Remove(filepath.Join(root, "Taskfile.yml")); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, root, true)
		p2 := mustRender(t, func() schema.InitOptions { o := generator.DefaultOptions("opencode", "demo"); o.CPUs = 8; return o }())
		ch := apply(t, root, p2, generator.WriteOptions{DryRun: true, Force: true})
		want := allAs(p2, generator.Unchanged, map[string]generator.Action{
			"README.md": generator.Overwrite, "Taskfile.yml": generator.Create, "sandbox.yaml": generator.Update,
			// the record follows: the answers, and the bytes asb writes now
			".asb-base/sandbox.yaml": generator.Update, "asb.yaml": generator.Update,
		})
		if diff := cmp.Diff(want, actions(ch)); diff != "" {
			t.Errorf("actions (-want +got):\n%s", diff)
		}
		sameTree(t, "a dry run", before, snapshot(t, root, true))
	})
}

func TestReinitIsUnchangedAndWritesNothing(t *testing.T) {
	root := t.TempDir()
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	apply(t, root, p, generator.WriteOptions{})
	before := snapshot(t, root, true)
	time.Sleep(10 * time.Millisecond) // a rewrite would show in the mtimes
	for _, force := range []bool{false, true} {
		ch := apply(t, root, p, generator.WriteOptions{Force: force})
		if diff := cmp.Diff(allAs(p, generator.Unchanged, nil), actions(ch)); diff != "" {
			t.Errorf("re-init (force=%v) actions (-want +got):\n%s", force, diff)
		}
	}
	sameTree(t, "a re-init", before, snapshot(t, root, true))
}

func TestEditedFileIsKept(t *testing.T) {
	root := t.TempDir()
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	apply(t, root, p, generator.WriteOptions{})
	write(t, filepath.Join(root, "sandbox.yaml"), "# mine\n")
	before := snapshot(t, root, true)
	ch := apply(t, root, p, generator.WriteOptions{})
	if diff := cmp.Diff(allAs(p, generator.Unchanged, map[string]generator.Action{"sandbox.yaml": generator.Kept}), actions(ch)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	for _, c := range ch {
		if c.Path == "sandbox.yaml" && !strings.Contains(c.Why, "--force") {
			t.Errorf("kept file's reason %q does not mention --force", c.Why)
		}
	}
	sameTree(t, "re-init over an edited file", before, snapshot(t, root, true))
	// Still "edited" next time: keeping a file does not adopt the edit.
	ch = apply(t, root, p, generator.WriteOptions{})
	if a := actions(ch)["sandbox.yaml"]; a != generator.Kept {
		t.Errorf("second re-init: sandbox.yaml is %s, want kept", a)
	}
}

func TestForceOverwritesKeepingOrig(t *testing.T) {
	root := t.TempDir()
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	apply(t, root, p, generator.WriteOptions{})
	write(t, filepath.Join(root, "sandbox.yaml"), "# mine\n")
	ch := apply(t, root, p, generator.WriteOptions{Force: true})
	if diff := cmp.Diff(allAs(p, generator.Unchanged, map[string]generator.Action{"sandbox.yaml": generator.Overwrite}), actions(ch)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	sb, _ := p.Lookup("sandbox.yaml")
	if got := read(t, filepath.Join(root, "sandbox.yaml")); got != string(sb.Content) {
		t.Errorf("sandbox.yaml not overwritten:\n%s", got)
	}
	if got := read(t, filepath.Join(root, "sandbox.yaml.orig")); got != "# mine\n" {
		t.Errorf("sandbox.yaml.orig = %q, want the edited content", got)
	}
	// The overwritten file is asb's again.
	ch = apply(t, root, p, generator.WriteOptions{})
	if a := actions(ch)["sandbox.yaml"]; a != generator.Unchanged {
		t.Errorf("after --force, sandbox.yaml is %s, want unchanged", a)
	}
}

// secrets.env holds real values: never overwritten, never copied.
func TestSecretsEnvIsNeverOverwritten(t *testing.T) {
	root := t.TempDir()
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	apply(t, root, p, generator.WriteOptions{})
	env := filepath.Join(root, "secrets.env")
	const real = "OPENCODE_API_KEY=sk-live-123\n"
	if err := os.WriteFile(env, []byte(real), 0o600); err != nil {
		t.Fatal(err)
	}
	// Another secret changes what secrets.env would hold.
	o := generator.DefaultOptions("opencode", "demo")
	o.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
	p2 := mustRender(t, o)
	for _, force := range []bool{false, true} {
		ch := apply(t, root, p2, generator.WriteOptions{Force: force})
		if a := actions(ch)["secrets.env"]; a != generator.Kept {
			t.Errorf("force=%v: secrets.env is %s, want kept", force, a)
		}
		if got := read(t, env); got != real {
			t.Fatalf("force=%v: secrets.env was rewritten:\n%s", force, got)
		}
		if _, err := os.Lstat(env + ".orig"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("force=%v: secrets.env.orig exists (a copy of real credentials)", force)
		}
	}
	if fi, _ := os.Stat(env); fi.Mode().Perm() != 0o600 {
		t.Errorf("secrets.env mode %o", fi.Mode().Perm())
	}
	sec := read(t, filepath.Join(root, "secrets.yaml"))
	if !strings.Contains(sec, "GITHUB_TOKEN:") {
		t.Errorf("secrets.yaml (unedited) was not updated with the new secret")
	}
}

// A file asb wrote and the user left alone follows the options.
func TestUneditedFileFollowsOptions(t *testing.T) {
	root := t.TempDir()
	apply(t, root, mustRender(t, generator.DefaultOptions("opencode", "demo")), generator.WriteOptions{})
	write(t, filepath.Join(root, "README.md"), "mine\n")
	o := generator.DefaultOptions("opencode", "demo")
	o.CPUs, o.Memory = 4, "8G"
	o.Allow = []string{"pypi.org"}
	p2 := mustRender(t, o)
	ch := apply(t, root, p2, generator.WriteOptions{})
	want := allAs(p2, generator.Unchanged, map[string]generator.Action{
		"sandbox.yaml": generator.Update, "README.md": generator.Kept,
		// the record follows: the answers, and the bytes asb writes now
		".asb-base/sandbox.yaml": generator.Update, ".asb-base/README.md": generator.Update, "asb.yaml": generator.Update,
	})
	if diff := cmp.Diff(want, actions(ch)); diff != "" {
		t.Errorf("actions (-want +got):\n%s", diff)
	}
	sb := read(t, filepath.Join(root, "sandbox.yaml"))
	for _, s := range []string{"\ncpus: 4\n", "\nmemory: \"8G\"\n", "- \"pypi.org\""} {
		if !strings.Contains(sb, s) {
			t.Errorf("updated sandbox.yaml lacks %q", s)
		}
	}
	if read(t, filepath.Join(root, "README.md")) != "mine\n" {
		t.Error("edited README.md was touched")
	}
	if _, err := os.Lstat(filepath.Join(root, "sandbox.yaml.orig")); err == nil {
		t.Error("an update of an unedited file left a .orig")
	}
	// Without a manifest, asb cannot tell its own output from an edit.
	if err := os.RemoveAll(filepath.Join(root, ".asb")); err != nil {
		t.Fatal(err)
	}
	ch = apply(t, root, mustRender(t, generator.DefaultOptions("opencode", "demo")), generator.WriteOptions{})
	if a := actions(ch)["sandbox.yaml"]; a != generator.Kept {
		t.Errorf("without .asb/generated.json, a differing sandbox.yaml is %s, want kept", a)
	}
}

func TestConflictsWriteNothing(t *testing.T) {
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	cases := []struct {
		name  string
		setup func(t *testing.T, root string)
		force bool
		path  string
	}{
		{"folder where a file goes", func(t *testing.T, root string) {
			if err := os.MkdirAll(filepath.Join(root, "sandbox.yaml", "x"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false, "sandbox.yaml"},
		{"file where a folder goes", func(t *testing.T, root string) { write(t, filepath.Join(root, "toolchain"), "x") }, false, "toolchain"},
		{"link where a file goes", func(t *testing.T, root string) {
			if err := os.Symlink("/etc/passwd", filepath.Join(root, "README.md")); err != nil {
				t.Fatal(err)
			}
		}, false, "README.md"},
		{"link where a folder goes", func(t *testing.T, root string) {
			if err := os.Symlink(t.TempDir(), filepath.Join(root, "opencode")); err != nil {
				t.Fatal(err)
			}
		}, false, "opencode"},
		{".asb is a file", func(t *testing.T, root string) { write(t, filepath.Join(root, ".asb"), "x") }, false, ".asb"},
		{"manifest is a folder", func(t *testing.T, root string) {
			if err := os.MkdirAll(filepath.Join(root, generator.ManifestPath), 0o755); err != nil {
				t.Fatal(err)
			}
		}, false, generator.ManifestPath},
		{".orig is a folder", func(t *testing.T, root string) {
			write(t, filepath.Join(root, "Taskfile.yml"), "mine")
			if err := os.Mkdir(filepath.Join(root, "Taskfile.yml.orig"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, true, "Taskfile.yml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			c.setup(t, root)
			before := snapshot(t, root, true)
			for _, dry := range []bool{true, false} {
				ch, err := generator.Apply(context.Background(), root, p, generator.WriteOptions{Force: c.force, DryRun: dry})
				var ce *generator.ConflictError
				if !errors.As(err, &ce) {
					t.Fatalf("dry=%v: err = %v, want a ConflictError", dry, err)
				}
				if len(ce.Changes) != 1 || ce.Changes[0].Path != c.path {
					t.Errorf("dry=%v: conflicts %+v, want one on %s", dry, ce.Changes, c.path)
				}
				if actions(ch)[c.path] != generator.Conflict {
					t.Errorf("dry=%v: %s is %s in the report", dry, c.path, actions(ch)[c.path])
				}
				if !strings.Contains(err.Error(), "nothing was changed") || !strings.Contains(err.Error(), c.path+": ") {
					t.Errorf("dry=%v: error does not name the path and say nothing changed: %v", dry, err)
				}
			}
			sameTree(t, "a conflicting Apply", before, snapshot(t, root, true))
		})
	}
}

func TestRootThatIsNoFolder(t *testing.T) {
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	dir := t.TempDir()
	f := filepath.Join(dir, "file")
	write(t, f, "x")
	for _, root := range []string{f, filepath.Join(f, "sub")} {
		_, err := generator.Apply(context.Background(), root, p, generator.WriteOptions{})
		if err == nil || !strings.Contains(err.Error(), "file") {
			t.Errorf("Apply(%s): err = %v, want one saying a file is in the way", root, err)
		}
	}
	if read(t, f) != "x" {
		t.Error("the file in the way was changed")
	}
}

// cutCtx is a context whose Err turns to Canceled after n calls: Apply
// checks it before every step, so it stands for a failure (or a Ctrl-C) at
// exactly step n.
type cutCtx struct {
	context.Context
	n, calls int
}

func (c *cutCtx) Err() error {
	c.calls++
	if c.calls > c.n {
		return context.Canceled
	}
	return nil
}

// TestFailureAtEveryStepRollsBack interrupts Apply at each of its steps in
// turn and checks the folder is exactly as before: no partial tree, no
// temporary file, no .orig, old contents and modes back.
func TestFailureAtEveryStepRollsBack(t *testing.T) {
	base := generator.DefaultOptions("opencode", "demo")
	changed := base
	changed.CPUs = 6
	changed.Secrets = []schema.SecretSpec{{Name: "GITHUB_TOKEN", Hosts: []string{"api.github.com"}}}
	scenarios := []struct {
		name  string
		setup func(t *testing.T, root string) // nil: root does not exist
		opts  schema.InitOptions
		force bool
	}{
		{"new folder", nil, base, false},
		{"existing folder, every kind of change", func(t *testing.T, root string) {
			apply(t, root, mustRender(t, base), generator.WriteOptions{})
			write(t, filepath.Join(root, "README.md"), "mine\n")       // overwrite + .orig
			write(t, filepath.Join(root, "README.md.orig"), "older\n") // an older .orig, replaced
			if err := os.RemoveAll(filepath.Join(root, "toolchain")); err != nil {
				t.Fatal(err) // a folder and its files to create
			}
			if err := os.Chmod(filepath.Join(root, "opencode", "tui.json"), 0o600); err != nil {
				t.Fatal(err) // a mode-only update
			}
			write(t, filepath.Join(root, "notes.txt"), "not asb's\n")
		}, changed, true},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			p := mustRender(t, sc.opts)
			prepare := func(t *testing.T) string {
				root := filepath.Join(t.TempDir(), "outer")
				if sc.setup != nil {
					if err := os.Mkdir(root, 0o755); err != nil {
						t.Fatal(err)
					}
					sc.setup(t, root)
				}
				return root
			}
			// A run that is never cut counts the steps.
			full := &cutCtx{Context: context.Background(), n: 1 << 30}
			if _, err := generator.Apply(full, prepare(t), p, generator.WriteOptions{Force: sc.force}); err != nil {
				t.Fatal(err)
			}
			if full.calls < len(p.Files) {
				t.Errorf("Apply checks its context %d times, fewer than once per file (%d)", full.calls, len(p.Files))
			}
			for n := 0; n < full.calls; n++ {
				t.Run("step "+strconv.Itoa(n), func(t *testing.T) {
					t.Parallel()
					root := prepare(t)
					before := snapshot(t, root, false)
					_, err := generator.Apply(&cutCtx{Context: context.Background(), n: n}, root, p, generator.WriteOptions{Force: sc.force})
					if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
						t.Fatalf("err = %v, want an interruption", err)
					}
					sameTree(t, "an Apply interrupted at this step", before, snapshot(t, root, false))
				})
			}
		})
	}
}

func TestCancelledContextWritesNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	root := filepath.Join(t.TempDir(), "outer")
	_, err := generator.Apply(ctx, root, mustRender(t, generator.DefaultOptions("opencode", "demo")), generator.WriteOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if _, err := os.Lstat(root); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a cancelled Apply left %s", root)
	}
}

// TestWroteHere: this machine's record says what asb wrote, with what
// content; a file it did not write, or wrote otherwise, is not its.
func TestWroteHere(t *testing.T) {
	root := t.TempDir()
	p := mustRender(t, generator.DefaultOptions("opencode", "demo"))
	apply(t, root, p, generator.WriteOptions{})
	r, err := folderfs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tf := read(t, filepath.Join(root, "Taskfile.yml"))
	if !generator.WroteHere(r, "Taskfile.yml", []byte(tf)) {
		t.Error("the Taskfile asb wrote is not recorded as written here")
	}
	if generator.WroteHere(r, "Taskfile.yml", []byte(tf+"# edited\n")) || generator.WroteHere(r, "notes.txt", []byte(tf)) {
		t.Error("content or a file asb did not write is recorded as written here")
	}
}
