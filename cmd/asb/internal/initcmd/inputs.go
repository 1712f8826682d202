package initcmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/agents-sandbox/asb/runner"
	"github.com/agents-sandbox/asb/schema"
)

func (o *Options) absDir() (string, error) {
	wd, err := o.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	dir := o.Dir
	if dir == "" {
		dir = "."
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(wd, dir)
	}
	dir = filepath.Clean(dir)
	// A path that runs through a regular file can never be created.
	for p := dir; ; p = filepath.Dir(p) {
		if fi, err := os.Stat(p); err == nil {
			if !fi.IsDir() {
				if p == dir {
					return "", fmt.Errorf("%s is a file, not a folder: give init a folder (new or existing)", o.displayDir())
				}
				return "", fmt.Errorf("%s is under %s, which is a file: choose a DIR that is not under a file", o.displayDir(), p)
			}
			break
		}
		if filepath.Dir(p) == p {
			break
		}
	}
	return dir, nil
}

func (o *Options) displayDir() string {
	if o.Dir == "" {
		return "."
	}
	return o.Dir
}

// cloneError is a failed `git clone` of --workspace, told in one line: the
// first line git printed (its "fatal: …"), not the temporary paths.
type cloneError struct {
	src string
	err error
}

func (e *cloneError) Error() string {
	why := e.err.Error()
	var te *runner.ToolError
	if errors.As(e.err, &te) {
		for line := range strings.SplitSeq(te.Output, "\n") {
			if line = strings.TrimSpace(line); line != "" {
				why = line
				break
			}
		}
	}
	return fmt.Sprintf("--workspace: git clone %s failed: %s", e.src, why)
}

func (e *cloneError) Unwrap() error { return e.err }

// ExitCode is 1, like any other failed init, not git's own 128.
func (e *cloneError) ExitCode() int { return 1 }

// checkWorkspaceArg checks --workspace by the origin rule for what the
// user types (schema.CheckTypedOrigin): a URL or a local path, never a
// password (it would be written to asb.yaml and workspace/.git/config), a
// control character, an option or a remote helper.
func checkWorkspaceArg(ws string) error {
	if ws == "" {
		return nil
	}
	_, err := schema.CheckTypedOrigin(ws)
	return err
}

func gitBin(g runner.Git) string {
	if g.Bin != "" {
		return g.Bin
	}
	return "git"
}

func looksLikeURL(s string) bool {
	return strings.Contains(s, "://") || (strings.Contains(s, "@") && strings.Contains(s, ":") && !strings.HasPrefix(s, "/"))
}

// suggestName turns a folder name into a valid project name (one that
// starts with a digit gets "project-" before it).
func suggestName(s string) string {
	n := schema.SanitizeName(s, schema.MaxProjectName, "my-project")
	if n[0] >= '0' && n[0] <= '9' {
		n = schema.SanitizeName("project-"+n, schema.MaxProjectName, "my-project")
	}
	return n
}
