package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// fakeSource replays events, as the agent's server streams them to every
// attached client.
type fakeSource []Event

func (s fakeSource) Events(ctx context.Context, emit func(Event)) error {
	for _, e := range s {
		emit(e)
	}
	return nil
}

func folder(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".asb"), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestNotifyOncePerEventAcrossClients: each kind of event is sent once,
// however many clients watch; nothing is sent when notifications are off.
func TestNotifyOncePerEventAcrossClients(t *testing.T) {
	stream := fakeSource{
		{ID: "permission.asked:per_1", Kind: KindInput, Session: "ses_1"},
		{ID: "idle:ses_1", Kind: KindDone, Session: "ses_1"},
		{ID: "error:ses_1:ab", Kind: KindError, Session: "ses_1"},
	}
	for _, mode := range []string{NotifyDesktop, NotifyBell, NotifyOff} {
		t.Run(mode, func(t *testing.T) {
			dir := folder(t)
			var mu sync.Mutex
			var sent []string
			var bell strings.Builder
			desktop := func(_ context.Context, title, body string) error {
				mu.Lock()
				defer mu.Unlock()
				sent = append(sent, title+": "+body)
				return nil
			}
			var wg sync.WaitGroup
			for range 2 { // two clients attached to one server
				n := &Notifier{Mode: mode, Project: "demo", Desktop: desktop, Bell: &lockedWriter{mu: &mu, w: &bell},
					Seen: &Dedup{Dir: dir, Now: time.Now, Window: time.Minute}}
				wg.Go(func() {
					if err := Watch(context.Background(), stream, n); err != nil {
						t.Error(err)
					}
				})
			}
			wg.Wait()
			want := 3
			if mode == NotifyOff {
				want = 0
			}
			got := len(sent) + strings.Count(bell.String(), "\a")
			if got != want {
				t.Fatalf("%s: %d notifications (%q, %d bells), want %d", mode, got, sent, strings.Count(bell.String(), "\a"), want)
			}
			if mode == NotifyDesktop {
				for i, w := range []string{"waits for your answer", "finished", "error"} {
					if !strings.Contains(strings.Join(sent, "\n"), w) || !strings.HasPrefix(sent[i], "asb: demo:") {
						t.Errorf("notifications %q lack %q", sent, w)
					}
				}
			}
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *strings.Builder
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestDedupWindow: the same session idle again after the window is a new
// notification; within it, the same.
func TestDedupWindow(t *testing.T) {
	dir := folder(t)
	now := time.Now()
	d := &Dedup{Dir: dir, Now: func() time.Time { return now }, Window: 30 * time.Second}
	for i, want := range []bool{true, false} {
		if got, err := d.Claim("idle:ses_1"); got != want || err != nil {
			t.Fatalf("claim %d = %v, %v; want %v", i, got, err, want)
		}
	}
	now = now.Add(time.Minute)
	if got, _ := d.Claim("idle:ses_1"); !got {
		t.Fatal("a claim older than the window still holds")
	}
}

// TestOpenCodeStream reads OpenCode's event stream: the three kinds, and
// nothing of the rest.
func TestOpenCodeStream(t *testing.T) {
	stream := `data: {"type":"server.connected","properties":{}}

data: {"type":"message.part.updated","properties":{"sessionID":"ses_1"}}

data: {"type":"permission.asked","properties":{"id":"per_9","sessionID":"ses_1"}}

data: {"type":"question.asked","properties":{"id":"que_2","sessionID":"ses_1"}}

data: {"type":"session.idle","properties":{"sessionID":"ses_1"}}

data: {"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"APIError"}}}
`
	var got []string
	if err := ReadSSE(strings.NewReader(stream), func(b []byte) {
		if e, ok := OpenCodeEvent(b); ok {
			got = append(got, e.Kind+" "+e.ID)
		}
	}); err != nil {
		t.Fatal(err)
	}
	want := "input permission.asked:per_9|input question.asked:que_2|done idle:ses_1|error error:ses_1:"
	if g := strings.Join(got, "|"); !strings.HasPrefix(g, want) || len(got) != 4 {
		t.Fatalf("events %q, want %q…", g, want)
	}
}

// TestPickNeverTakesAHeldPort: a second folder gets another port than the
// first holds, even while nothing listens on it (its VM stopped), and a
// port something listens on is skipped.
func TestPickNeverTakesAHeldPort(t *testing.T) {
	c := &Claims{Dir: t.TempDir()}
	a, b := folder(t), folder(t)
	for _, d := range []string{a, b} {
		if err := Save(d, &Record{Port: 1, GuestPort: 1}); err != nil {
			t.Fatal(err)
		}
	}
	only := map[int]bool{FirstPort + 7: true, FirstPort + 8: true}
	free := func(p int) bool { return only[p] }
	pa, err := c.Pick(a, free)
	if err != nil {
		t.Fatal(err)
	}
	pb, err := c.Pick(b, free)
	if err != nil {
		t.Fatal(err)
	}
	if pa == pb || !only[pa] || !only[pb] {
		t.Fatalf("ports %d and %d: want the two free ones, different", pa, pb)
	}
	if ok, _ := c.Keep(b, pa); ok {
		t.Fatalf("folder b may keep %d, which a holds", pa)
	}
	if _, err := c.Pick(folder(t), free); err == nil {
		t.Fatal("a third folder got a port though none is free")
	}
	if BindFree(0) != true {
		t.Fatal("BindFree(0) = false")
	}
}

// TestPrune: markers of old events go, recent ones stay.
func TestPrune(t *testing.T) {
	dir := folder(t)
	now := time.Now()
	d := &Dedup{Dir: dir, Now: func() time.Time { return now }, Window: time.Minute}
	for _, id := range []string{"old", "new"} {
		if ok, err := d.Claim(id); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(dir, SeenDir))
	old := now.Add(-48 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, SeenDir, entries[0].Name()), old, old); err != nil {
		t.Fatal(err)
	}
	d.Prune()
	if left, _ := os.ReadDir(filepath.Join(dir, SeenDir)); len(left) != 1 || left[0].Name() != entries[1].Name() {
		t.Fatalf("left %v", left)
	}
}

// TestRecordedPortIsCheckedAgain: the port of .asb/serve.json is a file's
// say: it is used only when it is in asb serve's range, no other folder
// holds it, and nothing but this folder's VM listens on it; else another
// is picked (the password goes only to the agent's server).
func TestRecordedPortIsCheckedAgain(t *testing.T) {
	agent := schema.Agent{Name: "opencode", Serve: &schema.AgentServe{Port: 4096}}
	for _, c := range []struct {
		name    string
		port    int
		other   bool // another folder claims it
		busy    bool // something listens on it
		ours    bool // ... this VM's forward
		stopped bool // ... of a VM that is not running
		keep    bool
		message string
	}{
		{"free, in range", FirstPort + 3, false, false, false, false, true, ""},
		{"out of range", 8080, false, false, false, false, false, "is outside asb serve's range"},
		{"another folder's", FirstPort + 3, true, false, false, false, false, "is held by another folder"},
		{"another program's", FirstPort + 3, false, true, false, false, false, "is in use by a program other than this folder's VM"},
		{"this VM's forward", FirstPort + 3, false, true, true, false, true, ""},
		// A stopped VM's config keeps the forward, but the port is then
		// anybody's: whoever listens there is not the VM.
		{"a stopped VM's forward", FirstPort + 3, false, true, true, true, false, "which is not running"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, other := folder(t), folder(t)
			if err := Save(other, &Record{Port: 1, GuestPort: 1}); err != nil {
				t.Fatal(err)
			}
			claims := &Claims{Dir: t.TempDir()}
			if c.other {
				if ok, err := claims.Keep(other, c.port); !ok || err != nil {
					t.Fatal(ok, err)
				}
			}
			d := Deps{
				Free: func(p int) bool { return !(c.busy && p == c.port) },
				Forwards: func(context.Context, string) ([]Forward, bool, error) {
					if c.ours {
						return []Forward{{HostBind: "127.0.0.1", HostPort: c.port, GuestPort: 4096}}, true, nil
					}
					return nil, true, nil
				},
				Status: func(context.Context, string) (string, error) {
					if c.stopped {
						return "Stopped", nil
					}
					return "Running", nil
				},
			}
			why, err := usable(context.Background(), dir, "vm", &Record{Port: c.port, GuestPort: agent.Serve.Port}, agent, claims, d)
			if err != nil {
				t.Fatal(err)
			}
			if (why == "") != c.keep || !strings.Contains(why, c.message) {
				t.Errorf("usable = %q; want keep %v (%q)", why, c.keep, c.message)
			}
		})
	}
}

// TestLookingEnvDropsThePassword: a run that only looks never gets the
// server's password, though it keeps asb's other ASB_ variables.
func TestLookingEnvDropsThePassword(t *testing.T) {
	if got := runner.LookingEnv([]string{PasswordVar + "=pw", "ASB_BUILDER=podman"}); len(got) != 1 || got[0] != "ASB_BUILDER=podman" {
		t.Errorf("LookingEnv = %q, want only ASB_BUILDER", got)
	}
}
