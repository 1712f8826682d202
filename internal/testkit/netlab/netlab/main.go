// Command netlab is the network lab of the real-boot network tests
// (package netlab): `netlab serve CONFIG` runs the name and web servers in
// the nested guest (and the scripted model on its host when the config
// has one: netlab.Model); `netlab probe [-H NAME=VALUE]... URL...` runs in the
// microVM and prints one JSON line per URL. Built statically for the
// guest's data disk and the test image; never linked into asb.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agents-sandbox/asb/internal/testkit/netlab"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "serve":
		serve(os.Args[2:])
	case "probe":
		probe(os.Args[2:])
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: netlab serve CONFIG.json READY-FILE | netlab probe [-t SECS] [-H NAME=VALUE]... URL...")
	os.Exit(2)
}

func serve(args []string) {
	if len(args) != 2 {
		usage()
	}
	c, err := netlab.ReadConfig(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, "netlab:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	logf := func(f string, a ...any) { fmt.Fprintf(os.Stderr, "netlab: "+f+"\n", a...) }
	ready := func() { _ = os.WriteFile(args[1], []byte("ready\n"), 0o644) }
	if err := c.Serve(ctx, ready, logf); err != nil {
		fmt.Fprintln(os.Stderr, "netlab:", err)
		os.Exit(1)
	}
}

type headers map[string]string

func (h headers) String() string { return fmt.Sprint(map[string]string(h)) }
func (h headers) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok {
		return fmt.Errorf("want NAME=VALUE, got %q", v)
	}
	h[k] = val
	return nil
}

func probe(args []string) {
	fs := flag.NewFlagSet("probe", flag.ExitOnError)
	h := headers{}
	fs.Var(h, "H", "a request header NAME=VALUE ($VAR expanded from the environment by the probe)")
	secs := fs.Int("t", 8, "seconds allowed for each step")
	_ = fs.Parse(args)
	enc := json.NewEncoder(os.Stdout)
	for _, u := range fs.Args() {
		_ = enc.Encode(netlab.Probe(context.Background(), u, h, time.Duration(*secs)*time.Second))
	}
}
