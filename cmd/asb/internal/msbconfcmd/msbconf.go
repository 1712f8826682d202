// Package msbconfcmd is `asb msb-conf` (hidden): what the installed msb
// needs beyond the committed folder, written at create time. The folder is
// shared by a team whose members may run different msb releases, so it
// holds only keys every supported release accepts; a key only newer
// releases have (schema.VersionedKeys) is written here, for this machine's
// msb, into .asb/msb/ (git-ignored), and never for a release that lacks it.
package msbconfcmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/serve"
)

// Dir is where the overlay files go, in the outer folder.
const Dir = ".asb/msb"

// DenyMessage is the body of msb's 403 for a host the allow list lacks
// (msb 0.7.5+ puts the host in for {host}): it tells the agent what to ask.
const DenyMessage = "asb: {host} is not in this sandbox's network allow list, so the request was refused. " +
	"Do not retry or work around it: ask the user to run `asb network allow {host}` on the host if the project needs it."

// Options are the parsed command line of `asb msb-conf`.
type Options struct {
	Factory *cmdutil.Factory
	Dir     string
}

// NewCmd returns `asb msb-conf`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &Options{Factory: f}
	cmd := &cobra.Command{
		Use:    "msb-conf",
		Short:  "Write what this machine's msb needs beyond the committed folder; print msb create's extra flags",
		Hidden: true,
		Args:   cmdutil.NoArgs,
		RunE:   func(cmd *cobra.Command, _ []string) error { return Run(cmd.Context(), opts) },
	}
	cmdutil.AddDirFlag(cmd, &opts.Dir)
	return cmd
}

// Run writes the overlays for the installed msb and prints the flags that
// pass them (nothing for msb 0.7.2–0.7.4, which get the folder as it is).
func Run(ctx context.Context, o *Options) error {
	f, err := cmdutil.OpenFolder(o.Factory, o.Dir)
	if err != nil {
		return err
	}
	// The msb on PATH, whatever host shape a test pretends (Factory.Host
	// is for the boot facts).
	_, caps, err := host.DetectMSB(ctx, host.SystemHost{})
	if err != nil {
		return err
	}
	sb, _ := f.Current(outer.SandboxFile)
	sec, _ := f.Current(outer.SecretsFile)
	flags, err := Write(f.Dir, sb, sec, OptionsFor(caps, keyHeaders(o.Factory)))
	if err != nil {
		return err
	}
	// asb serve's forward of the agent's server (this machine's pick), for
	// the folder's VM alone: a session's VM forwarding the same host port
	// would get the folder's password from asb attach whenever it held
	// the port first (hostile_net_serve_session_forward.txtar).
	if o.Factory.Getenv(runner.SessionEnv) == "" {
		fwd, err := serve.Flags(f.Dir)
		if err != nil {
			return err
		}
		flags = append(flags, fwd...)
	}
	if len(flags) > 0 {
		fmt.Fprintln(o.Factory.IO.Out, strings.Join(flags, " "))
	}
	return nil
}

// OptionsFor is what a release can be told: a readable denial from 0.7.5,
// secrets in their preset's headers only from 0.7.8.
func OptionsFor(caps host.MSBCaps, headers map[string][]string) schema.OverlayOptions {
	var o schema.OverlayOptions
	if caps.DenyResponse {
		o.DenyMessage = DenyMessage
	}
	if caps.HeaderFields {
		o.HeaderFields = headers
	}
	return o
}

// Write puts the overlays under dir/.asb/msb (removing a stale one) and
// returns msb create's flags for them, relative to dir.
func Write(dir string, sandbox, secrets []byte, o schema.OverlayOptions) ([]string, error) {
	sbConf, secConf, err := schema.MSBOverlay(sandbox, secrets, o)
	if err != nil {
		return nil, err
	}
	var flags []string
	for _, w := range []struct {
		flag, name string
		data       []byte
	}{{"--conf", outer.SandboxFile, sbConf}, {"--secret-conf", outer.SecretsFile, secConf}} {
		rel := Dir + "/" + w.name
		if w.data == nil {
			if err := removeIn(dir, rel); err != nil {
				return nil, err
			}
			continue
		}
		if err := generator.WriteFileAtomic(dir, rel, w.data, 0o600); err != nil {
			return nil, err
		}
		flags = append(flags, w.flag, Dir+"/"+w.name)
	}
	return flags, nil
}

// removeIn removes rel of the outer folder dir (absent is fine), through
// the folder's confined root.
func removeIn(dir, rel string) error {
	root, err := folderfs.Open(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	if err := root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return folderfs.Explain(rel, err)
	}
	return nil
}

// keyHeaders maps each preset's key variable (the secret's name) to the
// headers its agent sends the key in (agent.yaml key_headers).
func keyHeaders(f *cmdutil.Factory) map[string][]string {
	out := map[string][]string{}
	names, _ := generator.Agents(f.Templates)
	for _, n := range names {
		a, err := generator.LoadAgent(f.Templates, n)
		if err != nil || a.KeyVar == "" || len(a.KeyHeaders) == 0 {
			continue
		}
		for _, h := range a.KeyHeaders {
			if !slices.Contains(out[a.KeyVar], h) {
				out[a.KeyVar] = append(out[a.KeyVar], h)
			}
		}
	}
	return out
}
