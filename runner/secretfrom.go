package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/proc"
	"github.com/agents-sandbox/asb/schema"
)

// Secrets from a command (asb secret add NAME --from 'gh auth token'): the
// command is the user's own tooling, so it is kept on this host only, in
// the user's state folder ($XDG_STATE_HOME/asb/secret-commands, default
// ~/.local/state/asb/secret-commands), one file per outer folder named by
// the digest of the folder's resolved path. Never in the outer folder: a
// cloned folder is someone else's input, and a command it carried would
// run on the teammate's host. A clone cannot write here, so every command
// that runs is one this user recorded for this folder.

// SecretCommands is the store of the commands.
type SecretCommands struct{ Dir string }

// SecretCommandStore finds the user's store.
func SecretCommandStore(getenv func(string) string) (*SecretCommands, error) {
	base, err := StateDir(getenv)
	if err != nil {
		return nil, fmt.Errorf("%w: asb keeps the commands of secrets (asb secret add --from) there", err)
	}
	return &SecretCommands{Dir: filepath.Join(base, "secret-commands")}, nil
}

// StateDir is asb's folder in the user's state folder: $XDG_STATE_HOME/asb,
// default ~/.local/state/asb (this user's, on this machine, outside every
// repository).
func StateDir(getenv func(string) string) (string, error) {
	base := getenv("XDG_STATE_HOME")
	if base == "" || !filepath.IsAbs(base) {
		home := getenv("HOME")
		if home == "" || !filepath.IsAbs(home) {
			return "", errors.New("neither $XDG_STATE_HOME nor $HOME is set to an absolute path")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "asb"), nil
}

type commandsFile struct {
	Folder   string            `json:"folder"`
	Commands map[string]string `json:"commands"`
}

// File is the store's file for the outer folder dir.
func (s *SecretCommands) File(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	sum := sha256.Sum256([]byte(schema.ResolvePath(filepath.Clean(abs))))
	return filepath.Join(s.Dir, hex.EncodeToString(sum[:16])+".json")
}

// Load returns the commands recorded for dir (none: an empty map).
func (s *SecretCommands) Load(dir string) (map[string]string, error) {
	raw, err := os.ReadFile(s.File(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the commands of the secrets: %w", err)
	}
	var f commandsFile
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("the commands of the secrets (%s): %w; remove the file and add them again", s.File(dir), err)
	}
	if f.Commands == nil {
		f.Commands = map[string]string{}
	}
	return f.Commands, nil
}

// Set records command for name in dir ("" removes it).
func (s *SecretCommands) Set(dir, name, command string) error {
	cmds, err := s.Load(dir)
	if err != nil {
		return err
	}
	if command == "" {
		if _, ok := cmds[name]; !ok {
			return nil
		}
		delete(cmds, name)
	} else {
		cmds[name] = command
	}
	abs, _ := filepath.Abs(dir)
	raw, err := json.MarshalIndent(commandsFile{Folder: abs, Commands: cmds}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o700); err != nil {
		return fmt.Errorf("record the command: %w", err)
	}
	return generator.WriteFileAtomic(s.Dir, filepath.Base(s.File(dir)), append(raw, '\n'), 0o600)
}

// CommandError is a secret's command that failed. Its standard error was
// shown as it came; its standard output never is.
type CommandError struct {
	Name, Command string
	Err           error
}

func (e *CommandError) Error() string {
	return fmt.Sprintf("the command of secret %s (%s) failed: %v (its messages are above; what it printed on standard output is not shown); fix it, or record another with asb secret add %s --allow HOST --from 'COMMAND' --force",
		e.Name, e.Command, e.Err, e.Name)
}

func (e *CommandError) Unwrap() error { return e.Err }

// RunSecretCommand runs command with sh in dir and returns what it printed
// on standard output, without the final line break. The output stays in
// memory: it is never printed, written or put in an argument. Its
// standard error goes to stderr as it comes (a password manager may ask
// something there) and is kept for the error of a failed command.
func RunSecretCommand(ctx context.Context, dir, name, command string, env []string, stderr io.Writer) (string, error) {
	cmd := proc.Command(ctx, "sh", "-c", command)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, os.Stdin
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return "", &CommandError{Name: name, Command: command, Err: err}
	}
	v := strings.TrimRight(out.String(), "\r\n")
	if v == "" {
		return "", &CommandError{Name: name, Command: command, Err: errors.New("it printed no value")}
	}
	return v, nil
}

// FromCommands runs the recorded command of every secret secrets.yaml
// binds, and returns the values by the variable each binding reads.
func FromCommands(ctx context.Context, dir string, getenv func(string) string, env []string, stderr io.Writer) (map[string]string, error) {
	store, err := SecretCommandStore(getenv)
	if err != nil {
		return nil, nil //nolint:nilerr // no store: no command was recorded
	}
	cmds, err := store.Load(dir)
	if err != nil || len(cmds) == 0 {
		return nil, err
	}
	data, err := schema.ReadFile(filepath.Join(dir, schema.SecretsFile))
	if err != nil {
		return nil, nil //nolint:nilerr // no secrets.yaml: nothing is bound
	}
	secs, _, _ := schema.LoadSecrets(schema.SecretsFile, data)
	names := make([]string, 0, len(secs))
	for name := range secs {
		names = append(names, name)
	}
	sort.Strings(names)
	out := map[string]string{}
	for _, name := range names {
		command, ok := cmds[name]
		if !ok {
			continue
		}
		ref := name
		if r, ok := schema.EnvRef(secs[name].Value); ok {
			ref = r
		}
		v, err := RunSecretCommand(ctx, dir, name, command, env, stderr)
		if err != nil {
			return nil, err
		}
		out[ref] = v
	}
	return out, nil
}

// SecretCommandNames are the secrets of dir that have a recorded command
// (never the commands themselves, for what only needs to know: the
// rotation rule leaves them out).
func SecretCommandNames(dir string, getenv func(string) string) map[string]bool {
	out := map[string]bool{}
	store, err := SecretCommandStore(getenv)
	if err != nil {
		return out
	}
	cmds, _ := store.Load(dir)
	for name := range cmds {
		out[name] = true
	}
	return out
}
