package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// MSBCacheEnv names the file DetectMSB keeps its answers in; unset, it is
// asb/msb-version.json in the user's cache folder.
const MSBCacheEnv = "ASB_MSB_CACHE"

// ErrNoMSB is the error when no msb is on PATH: MissingMSB's message.
var ErrNoMSB = errors.New(MissingMSB())

// DetectMSB finds msb on PATH and looks its version up in the table. It
// runs `msb --version` once per binary: the answer is kept per real path,
// size and modification time, so a command that asks costs a stat and a
// small read, not a process, and an upgraded msb is asked again.
func DetectMSB(ctx context.Context, h Host) (string, MSBCaps, error) {
	p, key, err := msbKey(h)
	if err != nil {
		return "", MSBCaps{}, err
	}
	cache := readMSBCache(h)
	v, ok := cache[key]
	if !ok {
		ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
		defer cancel()
		out, stderr, err := h.Run(ctx, p, "--version")
		if err != nil {
			return p, MSBCaps{}, fmt.Errorf("%s --version failed: %s", p, firstLine(string(stderr), err))
		}
		v = strings.TrimSpace(string(out))
		cache[key] = v
		writeMSBCache(h, cache)
	}
	caps, err := CapsOf(v)
	return p, caps, err
}

// msbKey finds msb on PATH and the cache's key of that binary: its real
// path, size and modification time.
func msbKey(h Host) (path, key string, err error) {
	p, err := h.LookPath("msb")
	if err != nil {
		return "", "", ErrNoMSB
	}
	key = p
	if real, err := h.EvalSymlinks(p); err == nil {
		key = real
	}
	if st, err := h.Stat(key); err == nil {
		key = fmt.Sprintf("%s\x00%d\x00%d", key, st.Size(), st.ModTime().UnixNano())
	}
	return p, key, nil
}

// KnownMSB is the version of the msb on PATH when an earlier command asked
// it (DetectMSB's cache), without running it: for what only looks (asb
// validate). "" when msb is missing or was never asked.
func KnownMSB(h Host) string {
	_, key, err := msbKey(h)
	if err != nil {
		return ""
	}
	caps, err := CapsOf(readMSBCache(h)[key])
	if err != nil {
		return ""
	}
	return caps.Version
}

// rememberMSB keeps what the msb on PATH said to --version, as DetectMSB
// does.
func rememberMSB(h Host, version string) {
	if _, key, err := msbKey(h); err == nil {
		m := readMSBCache(h)
		m[key] = version
		writeMSBCache(h, m)
	}
}

// MissingMSB is the one message for an msb that is not on PATH: what, and
// the install command.
func MissingMSB() string {
	return "msb, microsandbox's CLI that runs the agent's VM, is not on PATH (asb supports " + MinMSB +
		" and later 0.7 releases; " + RecommendedMSB + "+ recommended). Install it: " + MSBInstallHint
}

// NeedMSB says, once and clearly, that msb is missing when any of tasks
// needs it (every task of the generated Taskfile but the image builds).
func NeedMSB(look func(string) (string, error), tasks []string) error {
	if look == nil {
		look = exec.LookPath
	}
	if _, err := look("msb"); err == nil {
		return nil
	}
	for _, t := range tasks {
		if t != "image:build" && t != "image:base" {
			return ErrNoMSB
		}
	}
	return nil
}

func msbCachePath(h Host) string {
	if p := h.Getenv(MSBCacheEnv); p != "" {
		return p
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "asb", "msb-version.json")
}

func readMSBCache(h Host) map[string]string {
	m := map[string]string{}
	if p := msbCachePath(h); p != "" {
		if b, err := h.ReadFile(p); err == nil {
			_ = json.Unmarshal(b, &m)
		}
	}
	return m
}

// writeMSBCache keeps the answers; a cache that cannot be written only
// costs the next command one `msb --version`.
func writeMSBCache(h Host, m map[string]string) {
	p := msbCachePath(h)
	if p == "" || len(m) > 64 {
		return
	}
	b, err := json.Marshal(m)
	if err != nil || os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	tmp := p + fmt.Sprintf(".%d", os.Getpid())
	if os.WriteFile(tmp, b, 0o644) == nil {
		_ = os.Rename(tmp, p)
	}
}
