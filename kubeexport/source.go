package kubeexport

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agents-sandbox/asb/generator"
	"github.com/agents-sandbox/asb/internal/folderfs"
	"github.com/agents-sandbox/asb/outer"
	"github.com/agents-sandbox/asb/schema"
)

// Source is what the export reads of an outer folder. It never holds a
// secret value: secrets.env is not opened, secrets.yaml gives only names.
type Source struct {
	Name      string // the project's name (asb.yaml)
	Image     string // sandbox.yaml's image (a local tag until pushed)
	CPUs      int
	Memory    string // msb's form: 512M, 4G
	Agent     schema.Agent
	Configs   []Config // each agent's config folder, read-only at its target
	Workspace schema.WorkspaceOrigin
	Env       map[string]string // sandbox.yaml env without ${…}
	Network   outer.NetworkView
	Ports     []schema.PortSpec
	Secrets   []SecretRef
	// Limits are the folder's limits by name (schema.Limits), as asb
	// limit ls shows them: "" when unset.
	Limits map[string]string
	// Tmpfs are the folder's tmpfs mounts (the tmp-size limit among them):
	// in-memory emptyDirs in the pod.
	Tmpfs []Tmpfs
	// Skipped says, one line each, what of the folder has no place in the
	// export (a bind of another host folder, an env value msb expands).
	Skipped []string
}

// Tmpfs is a tmpfs mount: where, and its size in msb's form ("" unset).
type Tmpfs struct {
	Target string
	Size   string
}

// Config is one agent's config folder.
type Config struct {
	Agent  string
	Dir    string // in the outer folder
	Target string // in the guest
	Files  []File
}

// File is one file of a config folder, by its slash path below it.
type File struct {
	Path string
	Data []byte
}

// SecretRef is one secret binding: the variable the agent sees and the
// key of the Kubernetes Secret that holds its value.
type SecretRef struct {
	Env   string
	Key   string
	Hosts []string
}

// Limits on what a ConfigMap can carry: the API server refuses an object
// over 1 MiB, so the config folders may hold at most this much together.
const (
	maxConfigBytes = 900 << 10
	maxConfigFiles = 200
)

// Read reads the outer folder dir: asb.yaml's record, sandbox.yaml,
// secrets.yaml (names and hosts only) and the agents' config folders, all
// through the folder's confined root.
func Read(dir string, tree fs.FS) (*Source, error) {
	rec, err := schema.ReadRecord(dir)
	if err != nil {
		return nil, err
	}
	root, err := folderfs.Open(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := root.ReadFile(schema.SandboxFile, 1<<20)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", schema.SandboxFile, err)
	}
	sb, _, probs := schema.LoadSandbox(schema.SandboxFile, data)
	if err := firstError(probs); err != nil {
		return nil, err
	}
	agent, err := generator.LoadAgent(tree, rec.Agent)
	if err != nil {
		return nil, err
	}
	src := &Source{Name: rec.Answers.Name, Image: sb.Image, CPUs: sb.CPUs, Memory: sb.Memory,
		Agent: agent, Workspace: rec.Workspace, Network: outer.NetworkOf(sb.Network), Env: map[string]string{}}
	if err := src.readLimits(root, data); err != nil {
		return nil, err
	}
	if err := src.readMounts(root, sb, tree, rec); err != nil {
		return nil, err
	}
	src.readEnv(sb.Env)
	if err := src.readPorts(sb); err != nil {
		return nil, err
	}
	if err := src.readSecrets(root); err != nil {
		return nil, err
	}
	return src, nil
}

func firstError(probs []schema.Problem) error {
	for _, p := range probs {
		if p.Severity == schema.SeverityError {
			return fmt.Errorf("%s (asb validate lists every problem)", p.String())
		}
	}
	return nil
}

// readMounts keeps the agents' config folders; the workspace becomes a
// volume cloned from its origin; any other mount is named as skipped.
func (s *Source) readMounts(root *folderfs.Root, sb *schema.Sandbox, tree fs.FS, rec *schema.Record) error {
	agents := map[string]schema.Agent{}
	for _, name := range slices.Concat([]string{rec.Agent}, rec.Answers.Also) {
		a, err := generator.LoadAgent(tree, name)
		if err != nil {
			return err
		}
		agents[a.MountTarget] = a
	}
	total := 0
	for _, m := range sb.Mounts {
		a, isAgent := agents[m.Target]
		switch {
		case m.Target == "/workspace" || m.Target == "/home/dev":
			continue // the workspace and home volumes of the template
		case m.Kind == "tmpfs":
			var size string
			if m.Tmpfs != nil {
				size = m.Tmpfs.Size
			}
			s.Tmpfs = append(s.Tmpfs, Tmpfs{Target: path.Clean(m.Target), Size: size})
		case isAgent && m.Kind == "bind":
			c, err := readConfig(root, a, m.Bind, &total)
			if err != nil {
				return err
			}
			s.Configs = append(s.Configs, c)
		default:
			s.Skipped = append(s.Skipped, fmt.Sprintf("mount %s (%s): a folder of your host has no counterpart in the cluster; bake it into the image or add a volume to the template", m.Target, m.Kind))
		}
	}
	return nil
}

// readConfig reads the files of one config folder (regular files only; a
// link is refused by the confined root when it leads out).
func readConfig(root *folderfs.Root, a schema.Agent, bind string, total *int) (Config, error) {
	rel, err := root.Rel(bind)
	if err != nil {
		return Config{}, fmt.Errorf("the config folder of %s: %w", a.Name, err)
	}
	// The mount policy asb validate applies to the bind (schema.MountRules):
	// the outer folder itself, or one of its own folders (.git, .asb, …),
	// is no config folder, and the export must never carry secrets.env.
	dir := schema.ResolvePath(root.Dir())
	if re := (schema.MountRules{Dir: dir}).HostFolder(filepath.Join(dir, filepath.FromSlash(rel)), false); re != nil {
		re.Value = bind
		return Config{}, fmt.Errorf("the config folder of %s: mount %q %s", a.Name, re.Value, re.Why)
	}
	c := Config{Agent: a.Name, Dir: rel, Target: a.MountTarget}
	err = fs.WalkDir(root.FS(), rel, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if name := path.Base(p); !e.IsDir() && (name == schema.SecretsEnvFile || name == schema.SecretsFile) {
			return fmt.Errorf("%s is a secrets file: the export carries no secret value (asb validate refuses this mount too)", p)
		}
		if e.IsDir() || !e.Type().IsRegular() {
			if !e.IsDir() {
				return fmt.Errorf("%s is not a regular file: a ConfigMap carries files only", p)
			}
			return nil
		}
		b, err := root.ReadFile(p, maxConfigBytes)
		if err != nil {
			return err
		}
		*total += len(b)
		if *total > maxConfigBytes || len(c.Files) >= maxConfigFiles {
			return fmt.Errorf("the agents' config folders hold more than %d KiB or %d files: a ConfigMap holds at most 1 MiB; move large files into the image", maxConfigBytes>>10, maxConfigFiles)
		}
		fp := strings.TrimPrefix(p, rel+"/")
		if re := schema.ConfigFilePath(fp); re != nil {
			return re
		}
		c.Files = append(c.Files, File{Path: fp, Data: b})
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil // an empty config: asb sync has not run here
	}
	if err != nil {
		return Config{}, fmt.Errorf("the config folder %s of %s: %w", rel, a.Name, err)
	}
	sort.Slice(c.Files, func(i, j int) bool { return c.Files[i].Path < c.Files[j].Path })
	return c, nil
}

// readLimits reads the folder's limits as asb limit ls does, from
// sandbox.yaml and Taskfile.yml (through the confined root: secrets.env
// is never opened).
func (s *Source) readLimits(root *folderfs.Root, sandbox []byte) error {
	tf, err := root.ReadFile("Taskfile.yml", 1<<20)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("read Taskfile.yml: %w", err)
	}
	s.Limits = map[string]string{}
	for _, l := range outer.LimitsIn(sandbox, tf) {
		s.Limits[l.Name] = l.Value
	}
	return nil
}

// readEnv keeps sandbox.yaml's plain variables. A value with ${…} is one
// msb expands from the host's environment when the VM starts: a cluster
// has no such host, so it is skipped and named.
func (s *Source) readEnv(env map[string]string) {
	for k, v := range env {
		if strings.Contains(v, "${") {
			s.Skipped = append(s.Skipped, fmt.Sprintf("env %s: its value is expanded from your host's environment by msb; set it in the template by hand", k))
			continue
		}
		s.Env[k] = v
	}
	sort.Strings(s.Skipped)
}

func (s *Source) readPorts(sb *schema.Sandbox) error {
	specs := slices.Clone(sb.Ports)
	if sb.Network != nil {
		specs = append(specs, sb.Network.Ports...)
	}
	for _, spec := range specs {
		p, err := schema.ParsePort(spec)
		if err != nil {
			return fmt.Errorf("%s: %w", schema.SandboxFile, err)
		}
		s.Ports = append(s.Ports, p)
	}
	return nil
}

// readSecrets reads the names and hosts of secrets.yaml's bindings.
func (s *Source) readSecrets(root *folderfs.Root) error {
	data, err := root.ReadFile(schema.SecretsFile, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read %s: %w", schema.SecretsFile, err)
	}
	secs, _, probs := schema.LoadSecrets(schema.SecretsFile, data)
	if err := firstError(probs); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(secs)) {
		key := name
		if ref, ok := schema.EnvRef(secs[name].Value); ok {
			key = ref
		}
		s.Secrets = append(s.Secrets, SecretRef{Env: name, Key: key, Hosts: secs[name].Allow})
	}
	return nil
}

// configKey is a file's key in the ConfigMap: its path with every
// character a key may not hold (a slash among them) replaced; the volume's
// items put it back at its path.
func configKey(agent, p string) string {
	var b strings.Builder
	b.WriteString(agent + ".")
	for _, r := range p {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteString("_")
		}
	}
	return b.String()
}
