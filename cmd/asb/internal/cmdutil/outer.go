package cmdutil

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/spf13/cobra"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
	"github.com/agents-sandbox/asb/templates"
)

// AddDirFlag adds -d/--dir, the outer folder, to cmd and its subcommands.
func AddDirFlag(cmd *cobra.Command, dir *string) {
	cmd.PersistentFlags().StringVarP(dir, "dir", "d", "", "the outer folder (default: the folder holding sandbox.yaml, here or above)")
}

// FolderDir is the outer folder a command acts on: dirFlag, or the folder
// holding sandbox.yaml at or above the working directory.
func FolderDir(getwd func() (string, error), dirFlag string) (string, error) {
	wd, err := getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	return outer.Resolve(wd, dirFlag)
}

// OpenFolder opens the outer folder a command acts on (FolderDir), to read
// it (EditFolder is for a command that changes it).
func OpenFolder(f *Factory, dirFlag string) (*outer.Folder, error) {
	dir, err := FolderDir(f.Getwd, dirFlag)
	if err != nil {
		return nil, err
	}
	return outer.Open(dir, outer.Options{Getenv: f.Getenv, Agents: Agents(f)})
}

// Agents returns the agent presets of the factory's templates. asb's own
// embedded presets are the ones schema reads once per process (every one
// of them is checked in full by the tests, TestOwnAgentsAreTheCheckedOnes):
// the full check of all of them cost each command that opens a folder
// more than the rest of its reading.
func Agents(f *Factory) []schema.Agent {
	if f.Templates == nil {
		return nil
	}
	if f.Templates == fs.FS(templates.FS) {
		return schema.DefaultAgents()
	}
	names, err := generator.Agents(f.Templates)
	if err != nil {
		return nil
	}
	var out []schema.Agent
	for _, n := range names {
		if a, err := generator.LoadAgent(f.Templates, n); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// PrintWarnings writes the new warnings of an edit, one per line.
func PrintWarnings(w io.Writer, warns []schema.Problem) {
	for _, p := range warns {
		fmt.Fprintln(w, p)
	}
}

// ShowCommand is the read-only subcommand of an edit command (`asb mount
// ls`, `asb network show`, …): it opens the outer folder (*dir, the parent's
// -d flag) and prints one part of the boundary with print.
func ShowCommand(f *Factory, dir *string, use string, aliases []string, short string, print func(*outer.Boundary, io.Writer)) *cobra.Command {
	return &cobra.Command{
		Use:     use,
		Aliases: aliases,
		Short:   short,
		Args:    NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o, err := OpenFolder(f, *dir)
			if err != nil {
				return err
			}
			print(o.Summarize(), f.IO.Out)
			return nil
		},
	}
}

// NeedSubcommand is the RunE of a command that only groups subcommands
// (`asb mount`, `asb network`, …): a usage error naming them, taken from
// the command itself so the list cannot go stale.
func NeedSubcommand(cmd *cobra.Command, _ []string) error {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return &UsageError{Err: fmt.Errorf("say what to do: %s %s (%s --help)",
		cmd.CommandPath(), strings.Join(names, "|"), cmd.CommandPath())}
}

// InputError makes a refused value (a rule's verdict on an argument or a
// flag, schema.FieldError) a usage error, exit code 2; other errors pass.
func InputError(err error) error {
	var fe *schema.FieldError
	if errors.As(err, &fe) {
		return &UsageError{Err: err}
	}
	return err
}
