package sessioncmd

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

func lsCmd(o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:     "ls [--format json]",
		Aliases: []string{"list"},
		Short:   "List the sessions: branch, VM status, ahead/behind the base, ports, last activity",
		Long: `List the folder's sessions. Each one's branch is brought into the folder's
host repository (.asb/git) first, where it is NAME: what the agent committed,
for a checkout of your own to fetch (git fetch asb, git merge asb/NAME).`,
		Example: `  asb session ls
  asb session ls --format json | jq -r '.[] | select(.ahead > 0) | .name'`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runLs(cmd.Context(), o) },
	}
	c.Flags().StringVar(&o.Format, "format", "text", "output format: text or json")
	return c
}

func runLs(ctx context.Context, o *Options) error {
	if o.Format != "text" && o.Format != "json" {
		return &cmdutil.UsageError{Err: fmt.Errorf("--format %q: use text or json", o.Format)}
	}
	f := o.Factory
	dir, err := cmdutil.FolderDir(f.Getwd, o.Dir)
	if err != nil {
		return err
	}
	sessions, err := outer.Sessions(dir)
	if err != nil {
		return err
	}
	idle := idleTimeout(dir)
	states := outer.SessionStates(ctx, dir, sessions, tools(f))
	for i := range states {
		states[i].IdleTimeout = idle
	}
	if o.Format == "json" {
		enc := json.NewEncoder(termtext.JSON(f.IO.Out))
		enc.SetIndent("", "  ")
		return enc.Encode(states)
	}
	if len(states) == 0 {
		fmt.Fprintln(f.IO.Out, "no sessions: asb session new NAME starts one")
		return nil
	}
	tw := tabwriter.NewWriter(f.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tBRANCH\tVM\tAHEAD/BEHIND\tBASE\tPORTS\tLAST ACTIVITY")
	for _, st := range states {
		ab := fmt.Sprintf("+%d/-%d", st.Ahead, st.Behind)
		if st.Problem != "" {
			ab = "?"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Name, st.Branch, st.VMStatus, ab, st.Base, ports(st.Ports), ago(f.Now(), st.LastActivity))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if idle != "" {
		fmt.Fprintf(f.IO.Out, "Each VM stops after %s with no client attached (idle_timeout in sandbox.yaml); asb task agent --session NAME starts it again.\n", idle)
	} else {
		fmt.Fprintln(f.IO.Out, "The VMs run until stopped: sandbox.yaml sets no idle_timeout (asb limit set idle-timeout 30m).")
	}
	for _, st := range states {
		if st.Problem != "" {
			fmt.Fprintf(f.IO.ErrOut, "asb: session %s: %s\n", st.Name, st.Problem)
		}
	}
	return nil
}

// ports shows a session's host ports as HOST→GUEST.
func ports(m map[string]string) string {
	if len(m) == 0 {
		return "-"
	}
	var out []string
	for _, to := range m {
		out = append(out, to)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func ago(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t).Round(time.Second)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Format("2006-01-02")
}

func diffCmd(o *Options) *cobra.Command {
	c := &cobra.Command{
		Use:   "diff NAME [--stat] [--format json]",
		Short: "Show what the session's branch changed since it left its base",
		Long: `Show what the session's branch changed since it left its base, as the host
repository (.asb/git) has it: asb brings the session's commits there first,
reading its checkout as data. The files of the diff that tools on your host
run or obey (.envrc, .vscode/, package.json, Makefile, hooks, agents'
settings…) are listed after it, on standard error: look at them before you
merge the branch (in your own checkout: git fetch asb, git merge asb/NAME).`,
		Example: `  asb session diff fix-login
  asb session diff --stat fix-login
  asb session diff --format json fix-login | jq -r '.host_run[].path'`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			return runDiff(cmd.Context(), o)
		},
	}
	c.Flags().BoolVar(&o.Stat, "stat", false, "only the files changed and how much")
	c.Flags().StringVar(&o.Format, "format", "text", "output format: text or json")
	return c
}

func runDiff(ctx context.Context, o *Options) error {
	if o.Format != "text" && o.Format != "json" {
		return &cmdutil.UsageError{Err: fmt.Errorf("--format %q: use text or json", o.Format)}
	}
	f := o.Factory
	dir, err := cmdutil.FolderDir(f.Getwd, o.Dir)
	if err != nil {
		return err
	}
	s, err := outer.FindSession(dir, o.Name)
	if err != nil {
		return cmdutil.InputError(err)
	}
	table, err := generator.HostRunTable(f.Templates)
	if err != nil {
		return err
	}
	d, err := outer.DiffSession(ctx, dir, s, tools(f))
	if err != nil {
		return err
	}
	files, hostRun, err := d.Files(ctx, s.Name, table)
	if err != nil {
		return err
	}
	if o.Format == "json" {
		var diff strings.Builder
		if err := d.Write(ctx, o.Stat, &diff); err != nil {
			return err
		}
		enc := json.NewEncoder(termtext.JSON(f.IO.Out))
		enc.SetIndent("", "  ")
		return enc.Encode(struct {
			Session string              `json:"session"`
			Branch  string              `json:"branch"`
			Base    string              `json:"base"`
			Files   []string            `json:"files"`
			HostRun []outer.HostRunFile `json:"host_run"`
			Diff    string              `json:"diff"`
		}{s.Name, s.Name, s.Base, files, hostRun, diff.String()})
	}
	if err := d.Write(ctx, o.Stat, f.IO.Out); err != nil {
		return err
	}
	if len(hostRun) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "asb: session %s changes files that tools on your host run or obey; look at them before you merge it:\n", s.Name)
		for _, h := range hostRun {
			fmt.Fprintf(f.IO.ErrOut, "  %s  (%s)\n", h.Path, h.Why)
		}
	}
	return nil
}

// idleTimeout is the folder's idle_timeout ("" unset or unreadable).
func idleTimeout(dir string) string {
	f, err := outer.Open(dir, outer.Options{})
	if err != nil {
		return ""
	}
	for _, l := range f.LimitsOf() {
		if l.Name == schema.LimitIdleTimeout {
			return l.Value
		}
	}
	return ""
}
