package outer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

// Sync is Hydrate, then the report on w: what was done, and what is left
// (the values to set, and this clone's own VM).
func Sync(ctx context.Context, dir string, git runner.Git, opts Options, w io.Writer) error {
	r, err := Hydrate(ctx, dir, git, opts)
	if err != nil {
		return err
	}
	rec := r.Record
	fmt.Fprintf(w, "This clone of %s (made by asb %s; %s %s):\n", rec.Answers.Name, rec.Asb, rec.Agent, rec.AgentVersion)
	fmt.Fprintf(w, "  %s\n", r.Workspace)
	switch {
	case r.EnvCreated:
		fmt.Fprintf(w, "  secrets.env created (mode 0600, git-ignored) with a line for %s\n", strings.Join(r.EnvAdded, ", "))
	case len(r.EnvAdded) > 0:
		fmt.Fprintf(w, "  secrets.env: added a line for %s\n", strings.Join(r.EnvAdded, ", "))
	default:
		fmt.Fprintf(w, "  secrets.env has a line for every secret\n")
	}
	id, err := runner.ResolveIdentity(dir, rec.Agent, runner.IdentityOptions{Now: time.Now()})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nLeft to do:\n")
	if len(r.Unset) > 0 {
		fmt.Fprintf(w, "  $EDITOR secrets.env      # set %s (or export them)\n", strings.Join(r.Unset, ", "))
	}
	fmt.Fprintf(w, "  asb validate             # check the boundary\n")
	fmt.Fprintf(w, "  asb task agent           # this clone's own VM: %s\n", id.VM)
	return nil
}

// WorkspaceDir is the project's folder in the outer folder.
const WorkspaceDir = "workspace"

// SyncReport is what Hydrate did, and what is left for the user.
type SyncReport struct {
	Record     *schema.Record
	Workspace  string   // what became of workspace/
	EnvCreated bool     // secrets.env was made
	EnvAdded   []string // names given a "# NAME=" line
	Unset      []string // secrets with a value neither exported nor in secrets.env
}

// Hydrate sets up a clone of an outer folder from its record (asb.yaml):
// an empty workspace/ is cloned from the recorded origin, secrets.env is
// made (0600) or given a commented line for each secret of secrets.yaml it
// lacks. No committed file changes; a second run changes nothing.
func Hydrate(ctx context.Context, dir string, git runner.Git, opts Options) (*SyncReport, error) {
	rec, err := schema.ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	r := &SyncReport{Record: rec}
	if r.Workspace, err = hydrateWorkspace(ctx, dir, git, rec); err != nil {
		return nil, err
	}
	f, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	_, had := f.Current(SecretsEnvFile)
	r.EnvAdded = f.EnsureEnvLines()
	r.EnvCreated = !had && len(r.EnvAdded) > 0
	if _, err := f.Commit(); err != nil {
		return nil, err
	}
	set := f.EnvFileNames()
	for _, name := range f.SecretRefs() {
		if !set[name] && f.Getenv(name) == "" {
			r.Unset = append(r.Unset, name)
		}
	}
	return r, nil
}

// hydrateWorkspace clones the recorded origin into an empty workspace/,
// beside it first, so that a failed clone leaves nothing. Every step in the
// folder goes through its confined root: a committed workspace link is
// refused, never cloned into.
func hydrateWorkspace(ctx context.Context, dir string, git runner.Git, rec *schema.Record) (string, error) {
	o := rec.Workspace
	root, err := folderfs.Open(dir)
	if err != nil {
		return "", err
	}
	defer root.Close()
	if fi, err := root.Lstat(WorkspaceDir); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("workspace is not a folder (a link or a file): the VM would mount what it points to; remove it (git rm workspace) and run asb sync again")
	}
	entries, err := fs.ReadDir(root.FS(), WorkspaceDir)
	switch {
	case err == nil && len(entries) > 0:
		return "workspace/ has files already: left as it is", nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("workspace/: %w", err)
	case o.URL == "":
		if err := root.MkdirAll(WorkspaceDir, 0o755); err != nil {
			return "", fmt.Errorf("workspace/: %w", err)
		}
		if o.Local != "" {
			return "workspace/ is empty: the project is " + o.LocalNote() + ". Clone it yourself into workspace/ (git clone URL workspace), or ask its author to give it a remote and record it (" + schema.LocalShareFix(rec.Agent) + ")", nil
		}
		return "workspace/ is empty: asb.yaml records no origin (the folder was made with an empty workspace/); put the project in workspace/", nil
	}
	// A new folder of the root's own, so git writes under no committed link.
	tmp, err := os.MkdirTemp(dir, ".workspace.asb-")
	if err != nil {
		return "", fmt.Errorf("workspace/: %w", err)
	}
	tmpRel := filepath.Base(tmp)
	defer root.RemoveAll(tmpRel)
	at, err := git.CloneAt(ctx, o, filepath.Join(tmp, "clone"))
	var refused *schema.OriginError
	if errors.As(err, &refused) {
		return "", fmt.Errorf("workspace/: %w", err) // it says what to do
	}
	if err != nil {
		return "", fmt.Errorf("workspace/: %w; clone it yourself into workspace/ (or fix the URL in %s)", err, schema.RecordFile)
	}
	if err := root.Remove(WorkspaceDir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("workspace/: %w", err)
	}
	if err := root.Rename(tmpRel+"/clone", WorkspaceDir); err != nil {
		return "", fmt.Errorf("workspace/: %w", err)
	}
	msg := fmt.Sprintf("workspace/ cloned from %s", o.URL)
	if o.Branch != "" {
		msg += " (" + o.Branch + ")"
	}
	msg += " at " + short(at)
	if o.Commit != "" && o.Commit != at {
		msg += fmt.Sprintf("; the record names %s: the branch has moved on since", short(o.Commit))
	}
	return msg, nil
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
