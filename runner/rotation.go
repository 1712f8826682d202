package runner

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/joho/godotenv"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/schema"
)

// The running VM's secret values are kept as a fingerprint: an HMAC under
// a random key of this clone (32 bytes, 0600, never leaves .asb/), so the
// stamp tells a change and reveals nothing of a value — not even a short
// token, which a plain hash would let anyone try guesses against.
//
// Each VM has its stamp (the folder's, and each session's, in
// SecretsStampDir): a change restarts every VM that started with the old
// values, not only the first one attached after it.
const (
	SecretsStampDir = ".asb/secrets-stamps"
	// legacyStampPath is the one stamp of a folder whose Taskfile (made
	// before asb update) names no VM to asb secret stamp.
	legacyStampPath = ".asb/secrets.stamp"
	secretsKeyPath  = ".asb/secrets.key"
)

// secretsStampPath is vm's stamp; "" names the folder's legacy one.
func secretsStampPath(vm string) (string, error) {
	if vm == "" {
		return legacyStampPath, nil
	}
	if !validResourceName(vm) || strings.HasPrefix(vm, ".") {
		return "", fmt.Errorf("%q is not a VM name asb makes (lowercase letters, digits, - _ .)", vm)
	}
	return SecretsStampDir + "/" + vm, nil
}

// SecretValues are the values the VM's secrets get when it starts: each
// variable of secrets.yaml from its recorded command (asb secret add
// --from, run now), else from the environment, else from secrets.env (as
// go-task's dotenv reads it).
func SecretValues(ctx context.Context, dir string, getenv func(string) string, stderr io.Writer) (map[string]string, error) {
	from, err := FromCommands(ctx, dir, getenv, os.Environ(), stderr)
	if err != nil {
		return nil, err
	}
	vals, err := envSecretValues(dir, getenv, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range from {
		if vals == nil {
			vals = map[string]string{}
		}
		vals[k] = v
	}
	return vals, nil
}

// envSecretValues are the values from the environment and secrets.env, of
// every secret whose name skip does not hold.
func envSecretValues(dir string, getenv func(string) string, skip map[string]bool) (map[string]string, error) {
	refs, err := secretRefs(dir, skip)
	if err != nil || refs == nil {
		return nil, err
	}
	file, _ := godotenv.Read(filepath.Join(dir, schema.SecretsEnvFile))
	out := map[string]string{}
	for _, ref := range refs {
		if v := getenv(ref); v != "" {
			out[ref] = v
		} else {
			out[ref] = file[ref]
		}
	}
	return out, nil
}

// secretRefs are the variables whose values the secrets of secrets.yaml
// take (a secret's own name, or the ${VAR} its value names), sorted, of
// every secret whose name skip does not hold; nil without secrets.yaml.
func secretRefs(dir string, skip map[string]bool) ([]string, error) {
	data, err := schema.ReadFile(filepath.Join(dir, schema.SecretsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	secs, _, _ := schema.LoadSecrets(schema.SecretsFile, data)
	refs := []string{}
	for name, s := range secs {
		if skip[name] {
			continue
		}
		ref := name
		if r, ok := schema.EnvRef(s.Value); ok {
			ref = r
		}
		if !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	slices.Sort(refs)
	return refs, nil
}

// SecretsFingerprint is the keyed fingerprint of values (the key is made
// on first use).
func SecretsFingerprint(dir string, values map[string]string) (string, error) {
	key, err := secretsKey(dir)
	if err != nil {
		return "", err
	}
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	sort.Strings(names)
	return keyedSum(key, names, func(n string) string { return values[n] }), nil
}

// keyedSum is the HMAC-SHA256 under key of each name and its value, in
// the order of names, each length-prefixed so no two lists read alike.
func keyedSum(key []byte, names []string, value func(string) string) string {
	mac := hmac.New(sha256.New, key)
	for _, n := range names {
		v := value(n)
		fmt.Fprintf(mac, "%d:%s=%d:%s\n", len(n), n, len(v), v)
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// errTrackedState: a file of the secrets' stamps is tracked by the outer
// folder's git (folderfs.Local); asb neither reads nor writes it, and so
// keeps no stamps in this clone.
var errTrackedState = errors.New("tracked by git")

func secretsKey(dir string) ([]byte, error) {
	if folderfs.Local(dir, secretsKeyPath) != nil {
		return nil, errTrackedState
	}
	p := filepath.Join(dir, secretsKeyPath)
	if key, err := os.ReadFile(p); err == nil && len(key) == 32 {
		return key, nil
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	if err := generator.WriteFileAtomic(dir, secretsKeyPath, key, 0o600); err != nil {
		return nil, fmt.Errorf("the key of the secrets' fingerprint: %w", err)
	}
	return key, nil
}

// The rotation rule. A VM gets its secrets' values when it starts, so a
// value that changed since must restart it. What asb compares, on every
// asb task agent, vm:shell or vm:exec, is the keyed fingerprint of the
// values from the environment and secrets.env, which it reads without
// running anything. A secret added with --from is not in it: its command
// runs when the VM is created or started (asb secret exec), never to
// compare (a command that hands out a fresh token each time would restart
// the VM at every attach, and the attach would run it each time); a new
// value from it reaches the VM at its next start: asb task vm:stop, then
// asb task agent.

// stampValues are the values the rotation rule compares.
func stampValues(dir string, getenv func(string) string) (map[string]string, error) {
	return envSecretValues(dir, getenv, SecretCommandNames(dir, getenv))
}

// StampSecrets records the fingerprint of the values vm starts with (the
// rotation rule's: no command runs).
func StampSecrets(dir, vm string, getenv func(string) string) error {
	rel, err := secretsStampPath(vm)
	if err != nil {
		return err
	}
	if folderfs.Local(dir, rel) != nil || folderfs.Local(dir, secretsKeyPath) != nil {
		return nil // tracked by git: no stamp is kept in this clone
	}
	vals, err := stampValues(dir, getenv)
	if err != nil {
		return err
	}
	fp, err := SecretsFingerprint(dir, vals)
	if err != nil {
		return err
	}
	return generator.WriteFileAtomic(dir, rel, []byte(fp+"\n"), 0o600)
}

// SecretsChanged reports whether the values the rotation rule compares
// differ from those vm was started with; false when no start was recorded
// (nothing to compare with: a VM asb did not start, or one started before
// this asb). A folder whose Taskfile stamps no VM by name has the one
// legacy stamp. It runs nothing.
func SecretsChanged(dir, vm string, getenv func(string) string) (bool, error) {
	rel, err := secretsStampPath(vm)
	if err != nil {
		return false, err
	}
	stamp, err := readState(dir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		stamp, err = readState(dir, legacyStampPath)
	}
	if err != nil || folderfs.Local(dir, secretsKeyPath) != nil {
		return false, nil //nolint:nilerr // no stamp: no start to compare with
	}
	vals, err := stampValues(dir, getenv)
	if err != nil {
		return false, err
	}
	fp, err := SecretsFingerprint(dir, vals)
	if err != nil {
		return false, err
	}
	return !hmac.Equal([]byte(strings.TrimSpace(string(stamp))), []byte(fp)), nil
}

// Sessions counts the `msb exec … vm …` processes of this MSB_HOME: the
// sessions attached to vm (a shell, the agent).
func (m MSB) Sessions(vm string) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	home, n := m.getenv("MSB_HOME"), 0
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if len(argv) < 3 || filepath.Base(argv[0]) != "msb" || argv[1] != "exec" || !slices.Contains(argv, vm) {
			continue
		}
		if env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ")); procEnv(env, "MSB_HOME") == home {
			n++
		}
	}
	return n
}

// readState reads rel of .asb/ unless the outer folder's git tracks it
// (then it is missing: folderfs.Local).
func readState(dir, rel string) ([]byte, error) {
	if err := folderfs.Local(dir, rel); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
}
