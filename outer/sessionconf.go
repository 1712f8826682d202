package outer

import (
	"bytes"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/internal/yamledit"
	"github.com/agents-sandbox/asb/schema"
)

// sessionConfHeader opens every session's derived sandbox.yaml.
const sessionConfHeader = "# Written by asb from sandbox.yaml for session %s, and again before each run:\n" +
	"# do not edit it; edit sandbox.yaml (only /workspace's source and the host\n" +
	"# ports differ: the session's checkout, and host ports of its own).\n"

// DeriveSessionConf returns session s's sandbox.yaml, as asb writes it
// beside the checkout (.asb/sessions/NAME/sandbox.yaml): the folder's
// sandbox.yaml (sandbox) with the bind mounted at /workspace pointing at
// the session's checkout and each forwarded host port replaced by the
// session's own. msb resolves a relative path against the config's own
// folder, and msb 0.7.2 does not start a VM with a bind whose path holds
// .. ("mount …: Invalid argument"; the real-boot test), so every other
// relative path is made absolute against the outer folder dir, links
// resolved as msb's own working directory would be (./opencode becomes
// /home/me/proj/opencode). Nothing else differs, so the session has the
// folder's boundary. A port the folder forwards that s has no host port
// for is an error (AssignSessionPorts gives it one).
func DeriveSessionConf(sandbox []byte, s Session, dir string) ([]byte, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return deriveSession(sandbox, s, abs)
}

// sessionConfAsFolder is the same config with its paths relative to the
// outer folder, as if it stood in sandbox.yaml's place: what validate and
// boundary judge (schema.CheckDir reads paths against the outer folder).
func sessionConfAsFolder(sandbox []byte, s Session) ([]byte, error) {
	return deriveSession(sandbox, s, "")
}

// deriveSession is the session's config beside its checkout, its other
// relative paths made absolute against folder; with folder "", the same
// config as if it stood in sandbox.yaml's place.
func deriveSession(sandbox []byte, s Session, folder string) ([]byte, error) {
	doc, err := yamledit.Parse(sandbox)
	if err != nil {
		return nil, fmt.Errorf("%s: %w; fix it by hand (asb validate shows where)", SandboxFile, err)
	}
	root, err := doc.Root()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SandboxFile, err)
	}
	ws := "./" + s.Paths.Workspace
	if folder != "" {
		if err := absolutePaths(root, folder); err != nil {
			return nil, err
		}
		ws = "./" + path.Base(s.Paths.Workspace)
	}
	if err := pointWorkspace(root, ws); err != nil {
		return nil, err
	}
	for _, seq := range portLists(root) {
		for _, it := range yamledit.Items(seq) {
			to, ok := s.Ports[it.Value]
			if !ok {
				return nil, fmt.Errorf("session %s has no host port for %q of %s", s.Name, it.Value, SandboxFile)
			}
			it.Value, it.Style = to, yaml.DoubleQuotedStyle
		}
	}
	out, err := doc.Bytes()
	if err != nil {
		return nil, err
	}
	return append([]byte(fmt.Sprintf(sessionConfHeader, s.Name)), out...), nil
}

// absolutePaths makes every relative host path of the mounts (a bind's or
// a disk image's, in either form) absolute against folder. The short form
// SRC:TARGET cannot carry a folder path holding a colon. The mount at
// /workspace is left to pointWorkspace.
func absolutePaths(root *yaml.Node, folder string) error {
	rel := func(p string) bool { return p != "" && !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") }
	if strings.Contains(folder, "${") {
		// msb would expand it from the environment (schema.ExpandRefused),
		// and the session's VM would mount whatever that names.
		return fmt.Errorf("the outer folder's path %s holds ${, which msb expands from the environment in a config; a session's config names the folder's files by that path: move or rename the folder", folder)
	}
	for i, it := range yamledit.Items(yamledit.Get(root, "mounts")) {
		switch it.Kind {
		case yaml.ScalarNode: // "SRC:TARGET[:OPTS]"; SRC is a path when it looks like one
			src, rest, ok := strings.Cut(it.Value, ":")
			target, _, _ := strings.Cut(rest, ":")
			if ok && target != schema.WorkspaceMount && rel(src) && (strings.HasPrefix(src, ".") || strings.Contains(src, "/")) {
				if strings.Contains(folder, ":") {
					return fmt.Errorf("%s: mounts[%d] %q: a session's config names it by the outer folder's path, %s, whose colon msb's short form SRC:TARGET cannot carry; write it as bind: and target: in %s",
						SandboxFile, i, it.Value, folder, SandboxFile)
				}
				it.Value, it.Style = path.Join(folder, src)+":"+rest, yaml.DoubleQuotedStyle
			}
		case yaml.MappingNode:
			if t := yamledit.Get(it, "target"); t != nil && t.Value == schema.WorkspaceMount {
				continue
			}
			for _, key := range []string{"bind", "disk"} {
				if v := yamledit.Get(it, key); v != nil && v.Kind == yaml.ScalarNode && rel(v.Value) {
					v.Value, v.Style = path.Join(folder, v.Value), yaml.DoubleQuotedStyle
				}
			}
		}
	}
	return nil
}

// pointWorkspace makes the mount at /workspace a bind of src.
func pointWorkspace(root *yaml.Node, src string) error {
	for _, it := range yamledit.Items(yamledit.Get(root, "mounts")) {
		switch it.Kind {
		case yaml.ScalarNode: // "SRC:/workspace[:ro]"
			parts := strings.Split(it.Value, ":")
			if len(parts) >= 2 && parts[1] == schema.WorkspaceMount {
				parts[0] = src
				it.Value, it.Style = strings.Join(parts, ":"), yaml.DoubleQuotedStyle
				return nil
			}
		case yaml.MappingNode:
			if t := yamledit.Get(it, "target"); t != nil && t.Value == schema.WorkspaceMount {
				if b := yamledit.Get(it, "bind"); b != nil {
					b.Value, b.Style = src, yaml.DoubleQuotedStyle
					return nil
				}
			}
		}
	}
	return fmt.Errorf("%s binds no folder at %s: a session replaces that bind with its checkout (asb validate says how to fix it)", SandboxFile, schema.WorkspaceMount)
}

// FolderPorts lists the ports sandbox.yaml forwards, as it writes them.
func FolderPorts(sandbox []byte) ([]string, error) {
	doc, err := yamledit.Parse(sandbox)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SandboxFile, err)
	}
	root, err := doc.Root()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", SandboxFile, err)
	}
	var out []string
	for _, seq := range portLists(root) {
		for _, it := range yamledit.Items(seq) {
			out = append(out, it.Value)
		}
	}
	return out, nil
}

// AssignSessionPorts gives s a host port of its own for each port in
// folder that has none yet; free(bind, protocol, taken) returns a free host
// port not in taken (host.FreePort). taken starts with every host port the
// folder and the other sessions hold, so no two ever collide. It reports
// whether s changed.
func AssignSessionPorts(s *Session, folder []string, others []Session, free func(bind, proto string, taken map[int]bool) (int, error)) (bool, error) {
	taken := map[int]bool{}
	for _, p := range folder {
		if q, err := schema.ParsePort(p); err == nil {
			taken[q.Host] = true
		}
	}
	for _, o := range append(others, *s) {
		for _, to := range o.Ports {
			if q, err := schema.ParsePort(to); err == nil {
				taken[q.Host] = true
			}
		}
	}
	changed := false
	for _, p := range folder {
		if _, ok := s.Ports[p]; ok {
			continue
		}
		q, err := schema.ParsePort(p)
		if err != nil {
			return changed, fmt.Errorf("%s: port %w", SandboxFile, err)
		}
		if q.Host, err = free(q.Bind, q.Protocol, taken); err != nil {
			return changed, fmt.Errorf("no free host port for %s of session %s: %w", p, s.Name, err)
		}
		taken[q.Host] = true
		if s.Ports == nil {
			s.Ports = map[string]string{}
		}
		s.Ports[p], changed = q.String(), true
	}
	return changed, nil
}

// WriteSessionConf derives session s's config from the folder's current
// sandbox.yaml and writes it when it differs (under the folder's lock, or
// the run's); it returns the derived content.
func WriteSessionConf(dir string, s Session) ([]byte, error) {
	r, err := folderfs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	sandbox, err := r.ReadFile(SandboxFile, schema.MaxFileSize)
	if err != nil {
		return nil, folderfs.Explain(SandboxFile, err)
	}
	conf, err := DeriveSessionConf(sandbox, s, dir)
	if err != nil {
		return nil, err
	}
	if cur, err := r.ReadFile(s.Paths.Conf, schema.MaxFileSize); err == nil && bytes.Equal(cur, conf) {
		return conf, nil
	}
	return conf, generator.WriteFilesIn(r, []generator.PendingFile{{Path: s.Paths.Conf, Data: conf, Mode: generator.ModeFile}})
}
