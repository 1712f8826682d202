package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/agents-sandbox/asb/internal/proc"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// LogPath is the server's log in the VM.
const LogPath = "/tmp/asb-serve.log"

// Deps are what Ensure runs on the host; tests swap them.
type Deps struct {
	Getenv func(string) string
	// RunTask runs `asb task NAME` in the folder (vm:start).
	RunTask func(ctx context.Context, name string) error
	// Up is whether the server answers (serve.Up).
	Up func(context.Context, Server) (bool, error)
	// Free is whether nothing holds a host port (BindFree).
	Free func(int) bool
	// Forwards are a VM's port forwards (nil: Forwards, from msb).
	Forwards func(ctx context.Context, vm string) ([]Forward, bool, error)
	// Status is the status msb records for a VM (nil: msb status).
	Status func(ctx context.Context, vm string) (string, error)
	// Wait is how long a started server may take to answer.
	Wait time.Duration
	// Recreate allows removing a VM made without the forward.
	Recreate bool
	Out      io.Writer // what is done, for the user (stderr)
}

// Running is the folder's server, as a host client reaches it.
type Running struct {
	Record  *Record
	Server  Server
	VM      string
	Started bool // false: it was running already
}

// NoServerError is a preset without a server mode.
type NoServerError struct{ Agent string }

func (e *NoServerError) Error() string {
	return fmt.Sprintf("%s has no server mode asb can serve (see docs/agents.md): use asb task agent", e.Agent)
}

// Ensure makes the folder's agent server run: a host port claimed and
// recorded, the password in secrets.env, the VM created with the forward
// and started, the server started in it unless one answers already.
func Ensure(ctx context.Context, f *outer.Folder, agent schema.Agent, d Deps) (*Running, error) {
	if agent.Serve == nil {
		return nil, &NoServerError{Agent: agent.Name}
	}
	id, err := runner.ResolveIdentity(f.Dir, agent.Name, runner.IdentityOptions{Now: time.Now()})
	if err != nil {
		return nil, err
	}
	rec, err := claimPort(ctx, f.Dir, id.VM, agent, d)
	if err != nil {
		return nil, err
	}
	pw, created, err := Password(ctx, f, d.Getenv, d.Out)
	if err != nil {
		return nil, err
	}
	if created {
		fmt.Fprintf(d.Out, "asb: a new password for the agent's server is in secrets.env (%s)\n", PasswordVar)
	}
	s := agent.Serve
	r := &Running{Record: rec, Server: Server{URL: rec.URL(), User: s.User, Password: pw, Health: s.Health}}
	if up, err := d.Up(ctx, r.Server); up || err != nil {
		return r, err
	}
	r.VM = id.VM
	if err := ensureForward(ctx, r.VM, rec, d); err != nil {
		return nil, err
	}
	if err := d.RunTask(ctx, "vm:start"); err != nil {
		return nil, err
	}
	fmt.Fprintf(d.Out, "asb: starting %s's server in %s\n", agent.Name, r.VM)
	if err := StartInVM(ctx, r.VM, s, pw); err != nil {
		return nil, err
	}
	r.Started = true
	return r, WaitUp(ctx, r.Server, d.Up, d.Wait, 200*time.Millisecond)
}

// claimPort keeps the folder's recorded port while it may (usable), or
// picks and records another.
func claimPort(ctx context.Context, dir, vm string, agent schema.Agent, d Deps) (*Record, error) {
	claims, err := ClaimStore(d.Getenv)
	if err != nil {
		return nil, err
	}
	rec, ok, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if ok {
		why, err := usable(ctx, dir, vm, rec, agent, claims, d)
		if err != nil {
			return nil, err
		}
		if why == "" {
			return rec, nil
		}
		fmt.Fprintf(d.Out, "asb: port %d of %s %s; picking another\n", rec.Port, RecordFile, why)
	} else {
		rec = &Record{}
	}
	held, err := MSBForwarded(ctx)
	if err != nil {
		return nil, fmt.Errorf("the ports msb's sandboxes forward: %w", err)
	}
	p, err := claims.Pick(dir, func(p int) bool { return !held[p] && d.Free(p) })
	if err != nil {
		return nil, err
	}
	rec.Port, rec.GuestPort = p, agent.Serve.Port
	if err := Save(dir, rec); err != nil {
		claims.Release(dir, p)
		return nil, err
	}
	return rec, nil
}

// usable says why the recorded port may not be used ("" when it may): it
// is checked again before the password goes to it, as the record is only
// a file of the folder. It must be in asb serve's range, not another
// folder's, and either free or this VM's own forward, never a port where
// some other program listens. A forward is the VM's only while the VM
// runs: msb inspect keeps it in a stopped VM's config, when the port of
// 127.0.0.1 is anybody's to take (another user's program, say), and the
// health check would hand that program the password.
func usable(ctx context.Context, dir, vm string, rec *Record, agent schema.Agent, claims *Claims, d Deps) (string, error) {
	switch {
	case rec.Port < FirstPort || rec.Port >= FirstPort+PortCount:
		return fmt.Sprintf("is outside asb serve's range %d-%d", FirstPort, FirstPort+PortCount-1), nil
	case rec.GuestPort != agent.Serve.Port:
		return fmt.Sprintf("forwards to the VM's port %d, not %s's %d", rec.GuestPort, agent.Name, agent.Serve.Port), nil
	}
	if !d.Free(rec.Port) {
		forwards := d.Forwards
		if forwards == nil {
			forwards = Forwards
		}
		ports, _, err := forwards(ctx, vm)
		if err != nil {
			return "", err
		}
		if !slices.ContainsFunc(ports, func(p Forward) bool { return p.HostPort == rec.Port && p.HostBind == "127.0.0.1" }) {
			return "is in use by a program other than this folder's VM", nil
		}
		status := d.Status
		if status == nil {
			status = runner.MSB{Getenv: d.Getenv}.Status
		}
		st, err := status(ctx, vm)
		if err != nil {
			return "", err
		}
		if st != "Running" {
			return "is in use by a program other than this folder's VM, which is not running", nil
		}
	}
	if keep, err := claims.Keep(dir, rec.Port); err != nil || !keep {
		return "is held by another folder now", err
	}
	return "", nil
}

// ensureForward removes a VM msb made without the record's forward (with
// Recreate), so vm:start creates it again with it; msb takes ports only
// at create.
func ensureForward(ctx context.Context, vm string, rec *Record, d Deps) error {
	ports, found, err := Forwards(ctx, vm)
	if err != nil || !found {
		return err
	}
	for _, p := range ports {
		if p.HostPort == rec.Port && p.GuestPort == rec.GuestPort && p.HostBind == "127.0.0.1" {
			return nil
		}
	}
	if !d.Recreate {
		return fmt.Errorf("the VM %s was created without the forward of 127.0.0.1:%d to the agent's server (msb takes ports only when it creates a VM): run asb serve --recreate (its running sessions end; /workspace and the home volume stay)", vm, rec.Port)
	}
	fmt.Fprintf(d.Out, "asb: creating %s again, with the forward of 127.0.0.1:%d\n", vm, rec.Port)
	_, err = runner.Output(ctx, "", "msb", "remove", "--force", "--quiet", vm)
	return err
}

// MSBForwarded are the host ports msb's sandboxes forward (running or
// not: a stopped one binds its ports again when it starts), by msb list
// and msb inspect.
func MSBForwarded(ctx context.Context) (map[int]bool, error) {
	out, err := runner.Output(ctx, "", "msb", "list", "--quiet")
	if err != nil {
		return nil, err
	}
	held := map[int]bool{}
	for _, vm := range strings.Fields(string(out)) {
		ports, _, err := Forwards(ctx, vm)
		if err != nil {
			return nil, err
		}
		for _, p := range ports {
			held[p.HostPort] = true
		}
	}
	return held, nil
}

// Forward is one port forward as msb inspect records it.
type Forward struct {
	HostBind  string `json:"host_bind"`
	HostPort  int    `json:"host_port"`
	GuestPort int    `json:"guest_port"`
	Protocol  string `json:"protocol"`
}

// Forwards are the VM's port forwards (config.network.ports of msb
// inspect); found is false when msb has no such VM.
func Forwards(ctx context.Context, vm string) ([]Forward, bool, error) {
	out, err := runner.Output(ctx, "", "msb", "inspect", vm, "--format", "json")
	if err != nil {
		var te *runner.ToolError
		if errors.As(err, &te) && te.Code > 0 && strings.Contains(te.Output, "not found") {
			return nil, false, nil
		}
		return nil, false, err
	}
	var rec struct {
		Config struct {
			Network struct {
				Ports []Forward `json:"ports"`
			} `json:"network"`
		} `json:"config"`
	}
	if err := json.Unmarshal(out, &rec); err != nil {
		return nil, false, fmt.Errorf("msb inspect %s --format json: %w", vm, err)
	}
	return rec.Config.Network.Ports, true, nil
}

// StartScript is the shell script msb exec runs in the VM: it reads the
// password from its stdin into the server's variable (so it is on no
// command line and in no file) and leaves the server running in a session
// of its own, its output in LogPath.
func StartScript(s *schema.AgentServe) string {
	var argv []string
	for _, a := range s.Command {
		argv = append(argv, "'"+strings.ReplaceAll(a, "'", `'\''`)+"'")
	}
	return "IFS= read -r ASB_PW || exit 1\n" +
		s.PasswordEnv + "=$ASB_PW; export " + s.PasswordEnv + "; unset ASB_PW\n" +
		"setsid nohup " + strings.Join(argv, " ") + " </dev/null >" + LogPath + " 2>&1 &\n"
}

// StartInVM runs StartScript in vm as dev in /workspace, the password on
// its stdin.
func StartInVM(ctx context.Context, vm string, s *schema.AgentServe, pw string) error {
	cmd := proc.Command(ctx, "msb", "exec", "--stream", "-u", "dev", "-w", "/workspace", vm, "--", "sh", "-c", StartScript(s))
	cmd.Stdin = strings.NewReader(pw + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("msb exec %s (starting the agent's server): %w: %s", vm, err, strings.TrimSpace(string(out)))
	}
	return nil
}
