package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdImpostor is another program of the host (another user's, say) that
// listens on the port a folder's .asb/serve.json records while its VM is
// stopped, and answers as the agent's server would:
//
//	impostor DIR LOG    listen on 127.0.0.1 at DIR's recorded serve port
//	                    until the script ends, answer every request 200,
//	                    and append each basic-auth password it is sent
//	                    to LOG
func cmdImpostor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: impostor DIR LOG")
	}
	raw, err := os.ReadFile(filepath.Join(ts.MkAbs(args[0]), ".asb", "serve.json"))
	ts.Check(err)
	var rec struct {
		Port int `json:"port"`
	}
	ts.Check(json.Unmarshal(raw, &rec))
	// The VM's own server lets go of the port once msb says it stopped.
	var l net.Listener
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if l, err = net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(rec.Port)); err == nil || time.Now().After(end) {
			break
		}
	}
	ts.Check(err)
	log := ts.MkAbs(args[1])
	var mu sync.Mutex
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pw, ok := r.BasicAuth(); ok {
			mu.Lock()
			if f, err := os.OpenFile(log, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
				fmt.Fprintln(f, pw)
				_ = f.Close()
			}
			mu.Unlock()
		}
		fmt.Fprint(w, `{"healthy":true}`)
	})}
	go func() { _ = srv.Serve(l) }()
	ts.Defer(func() { _ = srv.Close() })
}
