package taskcmd

import (
	"context"
	"fmt"

	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
)

// sessionVars points the run at session o.Session (asb session new): its
// VM, home volume, derived config and checkout, through the Taskfile's
// vars. The derived config is written again from the folder's current
// sandbox.yaml first (a port the folder forwards since gets a host port of
// its own), under the folder's lock, so what msb reads is always asb's
// derivation of the approved sandbox.yaml, never a file found on disk.
func sessionVars(ctx context.Context, o *Options, dir string, vars map[string]string) error {
	s, err := outer.FindSession(dir, o.Session)
	if err != nil {
		return err
	}
	lock, err := runner.LockFolder(ctx, dir, "asb task --session "+s.Name, o.IO.ErrOut)
	if err != nil {
		return err
	}
	defer lock.Release()
	if s.HomeVolume == "" {
		note, err := outer.NewHome(dir, &s, o.now())
		if err != nil {
			return fmt.Errorf("session %s: %w", s.Name, err)
		}
		if note != "" {
			fmt.Fprintf(o.IO.ErrOut, "asb: %s\n", note)
		}
	}
	if err := refreshPorts(dir, &s); err != nil {
		return err
	}
	if _, err := outer.WriteSessionConf(dir, s); err != nil {
		return fmt.Errorf("session %s: %w", s.Name, err)
	}
	if !o.Dry && o.Summary == "" {
		if err := sessionFits(ctx, o, dir, s); err != nil {
			return err
		}
	}
	vars["VM"] = s.VM
	vars["HOME_VOLUME"] = s.HomeVolume
	vars["SANDBOX_CONF"] = s.Paths.Conf
	vars["SESSION"] = s.Name // the asb.session label: asb ls, df and prune
	vars["WORKSPACE"] = "./" + s.Paths.Workspace
	return nil
}

// refreshPorts gives s a host port for each port the folder forwards that
// it has none for yet, and records it.
func refreshPorts(dir string, s *outer.Session) error {
	f, err := outer.Open(dir, outer.Options{})
	if err != nil {
		return err
	}
	data, _ := f.Current(outer.SandboxFile)
	ports, err := outer.FolderPorts(data)
	if err != nil {
		return err
	}
	all, err := outer.Sessions(dir)
	if err != nil {
		return err
	}
	var others []outer.Session
	for _, x := range all {
		if x.Name != s.Name {
			others = append(others, x)
		}
	}
	changed, err := outer.AssignSessionPorts(s, ports, others, host.FreePort)
	if err != nil || !changed {
		return err
	}
	return outer.WriteSession(dir, *s)
}

// sessionFits checks, before the session's VM is first made, that the
// machine can hold it beside the running sandboxes (host.CanHold), so msb
// never fails half way or the host swaps. ASB_SKIP_HOST_CHECK=1 skips it,
// as it skips the boot check.
func sessionFits(ctx context.Context, o *Options, dir string, s outer.Session) error {
	if o.Getenv != nil && o.Getenv("ASB_SKIP_HOST_CHECK") == "1" {
		return nil
	}
	msb := runner.MSB{Getenv: o.Getenv}
	if st, err := msb.Status(ctx, s.VM); err != nil || st != "" {
		return nil //nolint:nilerr // it exists (or msb cannot say): nothing new to hold
	}
	f, err := outer.Open(dir, outer.Options{})
	if err != nil {
		return err
	}
	held, _ := msb.Running(ctx)
	var h host.Host = host.SystemHost{}
	if o.Host != nil {
		h = o.Host
	}
	note, err := outer.SessionFits(f, s.VM, host.ReadMachine(h), held)
	if err != nil {
		return fmt.Errorf("session %s: %w", s.Name, err)
	}
	if note != "" {
		fmt.Fprintf(o.IO.ErrOut, "asb: note: %s\n", note)
	}
	return nil
}
