package fakes

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ServeEventsFile, in the stand-ins' state folder, holds the events (one
// JSON object a line) the stand-in agent server streams on /event.
const ServeEventsFile = "serve-events.jsonl"

// serveStandinPW carries the password to the stand-in server: in its
// environment, as the VM's server gets it, never in its argv.
const serveStandinPW = "ASB_FAKE_SERVE_PASSWORD"

// startServer is msb exec --stream of a script that starts the agent's
// server: the stand-in reads the password line from stdin, as the script
// does, and serves as OpenCode's server would on the VM's forwarded port
// of the host (at the address msb binds), until the VM stops.
func (e *env) startServer(vm VMRecord, stdin []byte) error {
	if len(vm.Config.Network.Ports) == 0 {
		return nil // no forward: nothing on the host reaches it
	}
	pw, _, _ := strings.Cut(string(stdin), "\n")
	fwd := vm.Config.Network.Ports[0]
	self, err := exec.LookPath("msb")
	if err != nil {
		return err
	}
	addr := net.JoinHostPort(fwd.HostBind, strconv.Itoa(fwd.HostPort))
	cmd := exec.Command(self, "serve-standin", "--vm", vm.Name, "--listen", addr)
	cmd.Env = append(os.Environ(), serveStandinPW+"="+pw)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return err
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }() // reap it should it end while exec waits
	// Answer only once the stand-in listens: by then it has written all it
	// ever writes (its call record), so nothing lands in the state folder
	// after the test that started it ended (a loaded CI run saw a late one
	// recreate the folder during t.TempDir's cleanup).
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			return c.Close()
		}
		select {
		case err := <-ended:
			return fmt.Errorf("the stand-in server at %s ended: %v", addr, err)
		default:
		}
		if time.Now().After(end) {
			return fmt.Errorf("the stand-in server did not listen at %s within 30s", addr)
		}
	}
}

// serveStandin is the stand-in agent server (msb serve-standin, started by
// startServer): basic auth as user opencode, /global/health, and /event
// streaming ServeEventsFile's lines, then ending the stream.
func (e *env) serveStandin(args []string) error {
	fl, _, _ := flags(args, "--vm", "--listen")
	vm, addr, pw := last(fl["--vm"]), last(fl["--listen"]), os.Getenv(serveStandinPW)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/global/health", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `{"healthy":true}`) })
	mux.HandleFunc("/event", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		raw, _ := os.ReadFile(filepath.Join(e.state, ServeEventsFile))
		for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
			if line != "" {
				fmt.Fprintf(w, "data: %s\n\n", line)
			}
		}
	})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "opencode" || p != pw {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})}
	go func() { // the server lives as long as its VM runs (10 minutes at most)
		for end := time.Now().Add(10 * time.Minute); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			var rec VMRecord
			if e.get("msb-vms", vm, &rec) != nil || rec.Status != "Running" {
				break
			}
		}
		_ = srv.Close()
	}()
	if err := srv.Serve(l); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
