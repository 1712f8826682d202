package schema

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"
)

// The files of an outer folder that CheckDir reads.
const (
	SandboxFile    = "sandbox.yaml"
	SecretsFile    = "secrets.yaml"
	SecretsEnvFile = "secrets.env"
	TaskfileFile   = "Taskfile.yml"
	GitignoreFile  = ".gitignore"
	WorkspaceMount = "/workspace"
	HomeMount      = "/home/dev" // the home volume, mounted by the Taskfile
)

// CheckOptions tune CheckDir.
type CheckOptions struct {
	// Overrides maps a file (path relative to the outer folder, e.g.
	// "sandbox.yaml") to the content to check instead of what is on disk:
	// the boundary commands check an edit before they write it.
	Overrides map[string][]byte
	// Tracked reports whether rel is tracked by git; nil runs git in the folder.
	Tracked func(rel string) (bool, error)
	// Getenv looks up the host environment; nil means os.Getenv. Values are
	// only tested for being set, never echoed.
	Getenv func(string) string
	// FromCommand reports whether the secret name gets its value from a
	// command recorded on this host (asb secret add --from); nil: none.
	FromCommand func(name string) bool
	// CommandMissing says why the command of a secret FromCommand names
	// cannot run on this host ("program \"gh\" is not found on PATH"), or
	// "": judged without running it. nil: every command is found.
	CommandMissing func(name string) string
	// Context bounds the git commands CheckDir runs; nil means Background.
	Context context.Context
	// Agents are the agent presets whose config folders and targets the
	// mount checks know; nil means asb's own (DefaultAgents).
	Agents []Agent
	// MSBVersion is the msb installed here ("0.7.2"; "" unknown): a key
	// only a newer msb reads is refused with both releases named.
	MSBVersion string
	// Policy is the policy in force (LoadPolicy); nil: none.
	Policy *Policy
}

// CheckDir checks the whole outer folder dir: the syntax and types of
// sandbox.yaml and secrets.yaml as msb reads them, the boundary (mounts,
// network, secrets), secrets.env's mode and git status, and Taskfile.yml as
// go-task reads it. Problems are sorted by file and line.
func CheckDir(dir string, opts CheckOptions) []Problem {
	c := newChecker(dir, opts)
	c.run()
	SortProblems(c.probs)
	return c.probs
}

type checker struct {
	dir   string // resolved absolute outer folder
	home  string // resolved $HOME, "" when unknown
	opts  CheckOptions
	ctx   context.Context
	probs []Problem

	sb      *Sandbox
	sbL     *loader
	sbRoot  *yaml.Node
	sec     Secrets
	secL    *loader
	secRoot *yaml.Node
	envFile map[string]bool // names given a non-empty value in secrets.env
	agents  []Agent

	df          *dockerfileRead // toolchain/Dockerfile as read, once
	toolchainOK bool            // checkToolchain has run
}

func newChecker(dir string, opts CheckOptions) *checker {
	c := &checker{opts: opts, ctx: opts.Context, agents: opts.Agents}
	if c.agents == nil {
		c.agents = DefaultAgents()
	}
	if c.ctx == nil {
		c.ctx = context.Background()
	}
	if c.opts.Getenv == nil {
		c.opts.Getenv = os.Getenv
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = filepath.Clean(dir)
	}
	c.dir = resolvePath(abs)
	if h := c.opts.Getenv("HOME"); h != "" && filepath.IsAbs(h) {
		c.home = resolvePath(filepath.Clean(h))
	} else if h, err := os.UserHomeDir(); err == nil {
		c.home = resolvePath(h)
	}
	return c
}

func (c *checker) add(p Problem) { c.probs = append(c.probs, p) }

func (c *checker) at(file string, n *yaml.Node, sev Severity, field, fix, format string, args ...any) {
	p := Problem{File: file, Severity: sev, Field: field, Fix: fix, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		p.Line, p.Col = n.Line, n.Column
	}
	for _, l := range []*loader{c.sbL, c.secL} {
		if l != nil && l.file == file && l.lines > 0 && p.Line > l.lines {
			p.Line, p.Col = l.lines, 0
		}
	}
	c.add(p)
}

// read returns the content of rel: the override, else the file on disk.
func (c *checker) read(rel string) ([]byte, bool, error) {
	if b, ok := c.opts.Overrides[rel]; ok {
		return b, true, CheckSize(rel, b)
	}
	b, err := ReadFile(filepath.Join(c.dir, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

func (c *checker) run() {
	data, ok, err := c.read(SandboxFile)
	switch {
	case err != nil:
		c.add(Problem{File: SandboxFile, Severity: SeverityError, Msg: "cannot read the file: " + errText(err), Fix: "make it readable"})
	case !ok:
		c.add(Problem{File: SandboxFile, Severity: SeverityError, Msg: "the outer folder has no sandbox.yaml",
			Fix: "run asb validate in the outer folder, or asb init --agent AGENT to create one"})
	default:
		c.sbL = newLoader(SandboxFile)
		c.sbL.msb = c.opts.MSBVersion
		c.sb, c.sbRoot = c.sbL.sandbox(data)
		c.probs = append(c.probs, c.sbL.probs...)
	}
	if data, ok, err := c.read(SecretsFile); err != nil {
		c.add(Problem{File: SecretsFile, Severity: SeverityError, Msg: "cannot read the file: " + errText(err), Fix: "make it readable"})
	} else if ok {
		c.secL = newLoader(SecretsFile)
		c.secL.msb = c.opts.MSBVersion
		c.sec, c.secRoot = c.secL.secrets(data)
		c.probs = append(c.probs, c.secL.probs...)
	}
	c.checkSecretsEnv()
	c.checkRecord()
	if c.sb != nil {
		c.checkConsents()
		c.checkMounts()
		c.checkNetwork()
		c.checkPorts()
	}
	if c.sec != nil {
		c.checkSecrets()
	}
	c.checkTaskfile()
	c.checkToolchain()
	c.checkPolicy()
}

func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
