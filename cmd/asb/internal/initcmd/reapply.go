package initcmd

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// Re-running init on a folder whose files the user edited: the files are
// kept, and the flags given on this run are applied to them with the same
// comment-keeping edits the edit commands make, so that a run never
// applies its flags to one file and drops them from another. What cannot
// be applied so (a new name or agent, a network mode over an edited
// sandbox.yaml) is listed with the command that would, and init exits
// non-zero. secrets.env gets a commented line for every secret without one.

// reapplied is what re-init did to the files the user edited.
type reapplied struct {
	done     []string // "cpus 4 (sandbox.yaml)"
	left     []string // "--network public: …"
	envLines []string // names given a "# NAME=" line in secrets.env
}

// NotAppliedError lists the flags re-init could not apply.
type NotAppliedError struct{ Left []string }

func (e *NotAppliedError) Error() string {
	return "some flags were not applied to the files you edited (the rest was):\n  " + strings.Join(e.Left, "\n  ")
}

// reapply applies the flags given to the files the user edited.
func (o *Options) reapply(p *prepared, res *written) (*reapplied, error) {
	r := &reapplied{}
	if o.changed == nil {
		o.changed = func(string) bool { return false }
	}
	edited := editedFiles(p.plan, res.changes)
	f, err := outer.Open(p.dir, outer.Options{Getenv: o.Getenv, Agents: o.Agents})
	if err != nil {
		return nil, err
	}
	if edited[outer.SandboxFile] {
		if err := o.reapplySandbox(f, r); err != nil {
			return nil, err
		}
	}
	if edited[outer.SandboxFile] || edited[outer.SecretsFile] {
		if err := o.reapplySecrets(f, r); err != nil {
			return nil, err
		}
	}
	if edited[outer.DockerfileFile] {
		o.reapplyArg(f, r, "base-image", "BASE_IMAGE", o.Init.BaseImage)
		o.reapplyArg(f, r, "agent-version", "AGENT_VERSION", o.Init.AgentVersion)
	}
	r.envLines = f.EnsureEnvLines()
	if _, err := f.Commit(); err != nil {
		return nil, err
	}
	return r, nil
}

// editedFiles are the plan's files that were kept because the user edited
// them (not secrets.env, which is always the user's).
func editedFiles(plan *generator.Plan, changes []generator.Change) map[string]bool {
	out := map[string]bool{}
	for _, c := range changes {
		pf, _ := plan.Lookup(c.Path)
		if c.Action == generator.Kept && !pf.Preserve && !pf.AppendLines {
			out[c.Path] = true
		}
	}
	return out
}

func (o *Options) reapplySandbox(f *outer.Folder, r *reapplied) error {
	if o.changed("cpus") {
		if err := f.SetKey(outer.SandboxFile, "cpus", yamledit.Int(o.Init.CPUs), schema.SandboxKeys); err != nil {
			return err
		}
		r.done = append(r.done, fmt.Sprintf("cpus %d (sandbox.yaml)", o.Init.CPUs))
	}
	if o.changed("memory") {
		if err := f.SetKey(outer.SandboxFile, "memory", yamledit.Quoted(o.Init.Memory), schema.SandboxKeys); err != nil {
			return err
		}
		r.done = append(r.done, "memory "+o.Init.Memory+" (sandbox.yaml)")
	}
	if _, err := f.Commit(); err != nil {
		return err
	}
	if o.changed("network") && f.Summarize().Network.Policy != policyOf(o.Init.Network) {
		r.left = append(r.left, fmt.Sprintf("--network %s: sandbox.yaml is yours and sets another network; change network in it by hand (asb network allow/deny edit an allow list), or rerun with --force to replace it (a .orig copy is kept)", o.Init.Network))
	}
	if o.changed("allow") && len(o.Init.Allow) > 0 {
		if _, _, err := f.Allow(o.Init.Allow); err != nil {
			return err
		}
		r.done = append(r.done, "network.allow "+strings.Join(o.Init.Allow, ", ")+" (sandbox.yaml)")
	}
	if o.changed("port") {
		have := f.Summarize().Ports
		for _, spec := range o.Init.Ports {
			if slices.ContainsFunc(have, func(p outer.PortView) bool { return p.Spec == spec }) {
				continue
			}
			if _, _, err := f.AddPort(spec); err != nil {
				r.left = append(r.left, fmt.Sprintf("--port %s: %v", spec, err))
				continue
			}
			r.done = append(r.done, "ports "+spec+" (sandbox.yaml)")
		}
	}
	return nil
}

func (o *Options) reapplySecrets(f *outer.Folder, r *reapplied) error {
	if !o.changed("secret") {
		return nil
	}
	have := map[string][]string{}
	for _, s := range f.Summarize().Secrets {
		have[s.Name] = s.Hosts
	}
	for _, s := range o.Init.Secrets {
		switch hosts, ok := have[s.Name]; {
		case ok && slices.Equal(hosts, s.Hosts):
			// Bound already (secrets.yaml took it from this run's render);
			// an edited sandbox.yaml must still let the VM reach its hosts.
			e, _, err := f.Allow(s.Hosts)
			if err != nil {
				return err
			}
			if len(e.Added) > 0 {
				r.done = append(r.done, fmt.Sprintf("network.allow %s, for %s (sandbox.yaml)", strings.Join(e.Added, ", "), s.Name))
			}
		case ok:
			r.left = append(r.left, fmt.Sprintf("--secret %s@%s: secrets.yaml binds %s to %s; asb secret add %s --allow %s --force replaces its hosts",
				s.Name, strings.Join(s.Hosts, ","), s.Name, strings.Join(hosts, ","), s.Name, strings.Join(s.Hosts, ",")))
		default:
			if _, err := f.AddSecret(outer.SecretRequest{Name: s.Name, Hosts: s.Hosts}); err != nil {
				return err
			}
			r.done = append(r.done, fmt.Sprintf("secret %s sent to %s (secrets.yaml, network.allow)", s.Name, strings.Join(s.Hosts, ", ")))
		}
	}
	return nil
}

func (o *Options) reapplyArg(f *outer.Folder, r *reapplied, flag, arg, value string) {
	if !o.changed(flag) || value == "" {
		return
	}
	if err := f.SetDockerArg(arg, value); err != nil {
		r.left = append(r.left, fmt.Sprintf("--%s %s: %v", flag, value, err))
		return
	}
	r.done = append(r.done, fmt.Sprintf("ARG %s=%s (toolchain/Dockerfile)", arg, value))
}

// policyOf is the boundary's name of an init --network mode.
func policyOf(network string) string {
	if network == schema.NetworkAllow || network == schema.NetworkBalanced {
		return "allow-list"
	}
	return network
}

func reportReapplied(w io.Writer, r *reapplied) {
	if len(r.done) > 0 {
		fmt.Fprintf(w, "\nApplied to the files you edited (comments and layout kept):\n  %s\n", strings.Join(r.done, "\n  "))
	}
	if len(r.envLines) > 0 {
		fmt.Fprintf(w, "\nsecrets.env: added a commented line for %s; uncomment and fill in the value (or export it)\n", strings.Join(r.envLines, ", "))
	}
}
