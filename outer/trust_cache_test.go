package outer

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// cacheFolder lays down an approved folder and returns its judge.
func cacheFolder(t testing.TB) (string, Judge) {
	t.Helper()
	base := t.TempDir()
	dir := filepath.Join(base, "demo")
	env := map[string]string{"HOME": filepath.Join(base, "home"), "XDG_STATE_HOME": filepath.Join(base, "state"),
		"XDG_CONFIG_HOME": filepath.Join(base, "config")}
	plan, err := generator.Render(templates.FS, generator.DefaultOptions("opencode", "demo"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := generator.Apply(context.Background(), dir, plan, generator.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	j := Judge{Templates: templates.FS, Getenv: func(k string) string { return env[k] }}
	v, err := j.Check(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Approve("a test"); err != nil {
		t.Fatal(err)
	}
	return dir, j
}

// settle waits out the window in which a just-written file is too new
// for its stamp to be trusted (racyNs), then primes the cache.
func settle(t testing.TB, dir string, j Judge) {
	t.Helper()
	time.Sleep(2 * racyNs)
	v, err := CheckTrustCached(dir, j)
	if err != nil || !v.Trusted {
		t.Fatalf("priming: %+v, %v", v, err)
	}
}

// TestCachedVerdictReadsNothing: a second check with nothing changed is
// the cached verdict, read with stats only (no file of the trust set is
// opened); a change to a file's identity (its content kept) runs the full
// check, which reads the files again and still trusts it.
func TestCachedVerdictReadsNothing(t *testing.T) {
	dir, j := cacheFolder(t)
	settle(t, dir, j)
	before := TrustReads()
	v, err := CheckTrustCached(dir, j)
	if err != nil || !v.Trusted || !v.Cached {
		t.Fatalf("nothing changed: %+v, %v (want the cached verdict)", v, err)
	}
	if n := TrustReads() - before; n != 0 {
		t.Errorf("the cached verdict read %d files", n)
	}
	// Touched: same content, another stamp.
	later := time.Now().Add(time.Second)
	if err := os.Chtimes(filepath.Join(dir, "opencode", "opencode.json"), later, later); err != nil {
		t.Fatal(err)
	}
	before = TrustReads()
	v, err = CheckTrustCached(dir, j)
	if err != nil || !v.Trusted || v.Cached {
		t.Fatalf("touched: %+v, %v (want the full check, trusted)", v, err)
	}
	if TrustReads() == before {
		t.Error("the full check read no file")
	}
}

// TestEveryChangeRunsTheFullCheck: a file edited, a file added, the
// answers changed, the approval revoked, a policy written: each makes the
// next check the full one, whose verdict is not the cached "trusted".
func TestEveryChangeRunsTheFullCheck(t *testing.T) {
	for name, change := range map[string]func(t *testing.T, dir string, j Judge){
		"file edited": func(t *testing.T, dir string, _ Judge) {
			appendTo(t, filepath.Join(dir, "toolchain", "Dockerfile"), "RUN true\n")
		},
		"file added": func(t *testing.T, dir string, _ Judge) {
			appendTo(t, filepath.Join(dir, "run.sh"), "curl x | sh\n")
		},
		"answers changed": func(t *testing.T, dir string, _ Judge) {
			p := filepath.Join(dir, schema.RecordFile)
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(raw), "cpus: 2", "cpus: 3", 1)), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		"approval revoked": func(t *testing.T, dir string, j Judge) {
			store, _ := ApprovalStore(j.Getenv)
			if _, err := store.Revoke(dir); err != nil {
				t.Fatal(err)
			}
		},
		"approval file removed": func(t *testing.T, dir string, j Judge) {
			store, _ := ApprovalStore(j.Getenv)
			set, _, err := readTrustSet(dir, newScope(j.agents()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(store.setPath(dir, set.Hash())); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(store.answersPath(dir, set.AnswersHash())); err != nil {
				t.Fatal(err)
			}
		},
		"policy written": func(t *testing.T, _ string, j Judge) {
			writeUserPolicy(t, j, "network_modes: [none]\n")
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir, j := cacheFolder(t)
			settle(t, dir, j)
			if v, _ := CheckTrustCached(dir, j); !v.Cached {
				t.Fatal("no cached verdict to begin with")
			}
			change(t, dir, j)
			v, err := CheckTrustCached(dir, j)
			if err != nil {
				t.Fatal(err)
			}
			if v.Cached || v.Trusted {
				t.Errorf("after the change: cached %v, trusted %v (%s); want the full check's refusal", v.Cached, v.Trusted, v.Why)
			}
		})
	}
}

// writeUserPolicy adds s to the user's policy file of j.
func writeUserPolicy(t *testing.T, j Judge, s string) {
	t.Helper()
	p := schema.UserPolicyPath(j.getenv)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	appendTo(t, p, s)
}

func appendTo(t *testing.T, p, s string) {
	t.Helper()
	f, err := os.OpenFile(p, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(s); err != nil {
		t.Fatal(err)
	}
}

// TestRenderOfApprovedAnswers: asb's render runs as it is only when its
// answers are ones this user approved (as after an asb update with new
// templates, that kept them); the render of other answers does not.
func TestRenderOfApprovedAnswers(t *testing.T) {
	dir, j := cacheFolder(t)
	store, _ := ApprovalStore(j.Getenv)
	if _, err := store.Revoke(dir); err != nil {
		t.Fatal(err)
	}
	v, err := j.Check(dir)
	if err != nil || v.Trusted {
		t.Fatalf("a render of answers nobody approved: trusted %v (%s), %v", v.Trusted, v.Why, err)
	}
	if err := store.ApproveAnswers(dir, v.Set.AnswersHash()); err != nil {
		t.Fatal(err)
	}
	v, err = j.Check(dir)
	if err != nil || !v.Trusted || !strings.Contains(v.Why, "render of answers you approved") {
		t.Fatalf("a render of approved answers: trusted %v (%s), %v", v.Trusted, v.Why, err)
	}
	if last := store.Last(dir); last == nil || last.Grants == nil || last.Grants.Network != "allow" {
		t.Errorf("the render's approval kept no grants: %+v", last)
	}
}
