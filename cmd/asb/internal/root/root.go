// Package root assembles asb's command tree and runs it.
package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/cmd/asb/internal/agentcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/agentscmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/boundarycmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/cmdutil"
	"github.com/agents-sandbox/asb/cmd/asb/internal/dfcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/doctorcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/exportcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/fetchcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/imagecmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/initcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/kubecmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/limitcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/lscmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/mountcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/msbconfcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/networkcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/portcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/prunecmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/reapcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/secretcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/servecmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/sessioncmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/synccmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/taskcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/trustcmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/updatecmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/validatecmd"
	"github.com/agents-sandbox/asb/cmd/asb/internal/versioncmd"
	"github.com/agents-sandbox/asb/host"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// NewFactory returns the dependencies of a real run.
func NewFactory(io *cmdutil.IOStreams) *cmdutil.Factory {
	return &cmdutil.Factory{
		IO:         io,
		Templates:  templates.FS,
		Getwd:      os.Getwd,
		Getenv:     os.Getenv,
		Version:    version(),
		Executable: os.Executable,
		Now:        time.Now,
		Host:       host.SystemHost{},
		Engine:     execEngine,
		Exec:       runner.ExecProcess,
		// The administrator's floor: fixed, not moved by any variable.
		MachinePolicy: schema.MachinePolicyPath,
	}
}

// execEngine replaces asb with asb-task running spec (it returns only when
// the engine cannot be started).
func execEngine(_ context.Context, spec runner.EngineSpec, _ *cmdutil.IOStreams) error {
	path, err := runner.FindEngine(os.Getenv, os.Executable)
	if err != nil {
		return err
	}
	return runner.ExecEngine(path, spec)
}

func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// NewCmd builds the command tree.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "asb <command>",
		Short: "Run a coding agent in a microsandbox microVM that sees only what you choose",
		Long: `asb (agents-sandbox) runs a coding agent such as OpenCode inside a microsandbox
microVM. The agent sees only the files, credentials and network you list in an
"outer folder" that you commit and share with your team.

  asb init --agent opencode myproj   lay down the outer folder
  cd myproj && asb task agent        build, create and start the VM, attach the agent`,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	cmd.SetIn(f.IO.In)
	cmd.SetOut(f.IO.Out)
	cmd.SetErr(f.IO.ErrOut)
	cmd.SetFlagErrorFunc(cmdutil.FlagError)
	cmd.AddCommand(
		initcmd.NewCmd(f, nil),
		taskcmd.NewCmd(f),
		validatecmd.NewCmd(f),
		boundarycmd.NewCmd(f),
		secretcmd.NewCmd(f),
		servecmd.NewCmd(f),
		servecmd.NewAttachCmd(f),
		networkcmd.NewCmd(f),
		mountcmd.NewCmd(f),
		portcmd.NewCmd(f),
		limitcmd.NewCmd(f),
		sessioncmd.NewCmd(f),
		fetchcmd.NewCmd(f),
		doctorcmd.NewCmd(f),
		agentscmd.NewCmd(f),
		agentcmd.NewCmd(f),
		synccmd.NewCmd(f),
		trustcmd.NewCmd(f),
		updatecmd.NewCmd(f),
		versioncmd.NewCmd(f),
		reapcmd.NewCmd(f),
		msbconfcmd.NewCmd(f),
		imagecmd.NewCmd(f),
		lscmd.NewCmd(f),
		dfcmd.NewCmd(f),
		prunecmd.NewCmd(f),
		exportcmd.NewCmd(f),
		kubecmd.NewCmd(f),
	)
	return cmd
}

// Main runs asb with args and returns the exit code. Errors are printed once,
// on standard error, as "asb: …"; never a stack trace.
func Main(ctx context.Context, args []string, io *cmdutil.IOStreams) int {
	return Run(ctx, args, NewFactory(io))
}

// Run is Main with the dependencies given (tests swap some).
func Run(ctx context.Context, args []string, f *cmdutil.Factory) (code int) {
	io := cmdutil.Printing(f.IO)
	f.IO = io
	defer io.Flush()
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(io.ErrOut, "asb: internal error: %v\nplease report this with the command you ran\n", r)
			code = 70
		}
	}()
	folderfs.OnIgnored = func(rel string) { sayIgnored(io, rel) }
	cmd := NewCmd(f)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		var se *cmdutil.SilentError
		if !errors.As(err, &se) {
			msg := err.Error()
			// Flag and argument errors are UsageErrors already
			// (cmdutil.FlagError, cmdutil.ExactArgs…); this one is cobra's.
			if strings.HasPrefix(msg, "unknown command") {
				err = &cmdutil.UsageError{Err: err}
			}
			fmt.Fprintf(io.ErrOut, "asb: %s\n", msg)
		}
	}
	return cmdutil.ExitCode(err)
}

// saidEnv lists the files sayIgnored has named, for the asb processes this
// one starts (the Taskfile's asb validate, msb-conf…): one command says it
// once.
const saidEnv = "ASB_SAID_IGNORED"

// sayIgnored tells the user that asb reads no runtime state a clone
// carried (folderfs.Local), once per file and command.
func sayIgnored(io *cmdutil.IOStreams, rel string) {
	said := os.Getenv(saidEnv)
	if slices.Contains(strings.Split(said, "\n"), rel) {
		return
	}
	fmt.Fprintf(io.ErrOut, "asb: ignored %s: the outer folder's git tracks it, and runtime state is this machine's own (a clone's is never read); git rm --cached %s stops tracking it\n", rel, rel)
	_ = os.Setenv(saidEnv, strings.TrimPrefix(said+"\n"+rel, "\n"))
}
