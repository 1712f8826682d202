package networkcmd

import (
	"context"
	"fmt"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// withHostnames adds strict hostname checking to p as the installed msb
// applies it: network.strict when sandbox.yaml says, else the release's
// default (host's table); TLS interception when there is a secret or
// network.tls.enabled. With no msb to ask, the newest release's default.
func withHostnames(ctx context.Context, fac *cmdutil.Factory, f *outer.Folder, p schema.EgressPolicy) schema.EgressPolicy {
	data, _ := f.Current(outer.SandboxFile)
	_, root, _ := schema.LoadSandbox(outer.SandboxFile, data)
	nw, _ := schema.RawNetwork(yamledit.Get(root, "network"))
	secData, _ := f.Current(outer.SecretsFile)
	secs, _, _ := schema.LoadSecrets(outer.SecretsFile, secData)
	caps := host.MustCaps(host.NewestKnownMSB)
	if _, c, err := host.DetectMSB(ctx, host.SystemHost{}); err == nil && !c.Older {
		caps = c
	} else if nw == nil || nw.Strict == nil {
		fmt.Fprintf(fac.IO.ErrOut, "asb: no msb to ask (%v): judged as msb %s would\n", err, caps.Row)
	}
	return p.WithHostnames(schema.HostnameCheckingOf(nw, len(secs) > 0, caps.StrictDefault, caps.Version))
}
