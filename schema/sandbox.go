package schema

import (
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Sandbox is the sparse single-sandbox file `msb create --conf` reads
// (sandbox.yaml). Its keys are exactly those msb 0.7.2 accepts at the top
// level; msb rejects any other key, and so does LoadSandbox.
type Sandbox struct {
	Image                 string            `yaml:"image,omitempty" json:"image,omitempty" validate:"required"`
	PullPolicy            string            `yaml:"pull_policy,omitempty" json:"pull_policy,omitempty" validate:"omitempty,oneof=missing always never"`
	Registry              yaml.Node         `yaml:"registry,omitempty" json:"registry,omitempty"`
	CPUs                  int               `yaml:"cpus,omitempty" json:"cpus,omitempty" validate:"omitempty,asb_cpus"`
	Memory                string            `yaml:"memory,omitempty" json:"memory,omitempty" validate:"omitempty,asb_memory"`
	MaxDuration           string            `yaml:"max_duration,omitempty" json:"max_duration,omitempty"`
	IdleTimeout           string            `yaml:"idle_timeout,omitempty" json:"idle_timeout,omitempty"`
	Rlimits               yaml.Node         `yaml:"rlimits,omitempty" json:"rlimits,omitempty"`
	Workdir               string            `yaml:"workdir,omitempty" json:"workdir,omitempty" validate:"omitempty,startswith=/"`
	Shell                 string            `yaml:"shell,omitempty" json:"shell,omitempty"`
	User                  string            `yaml:"user,omitempty" json:"user,omitempty"`
	Hostname              string            `yaml:"hostname,omitempty" json:"hostname,omitempty"`
	Security              string            `yaml:"security,omitempty" json:"security,omitempty" validate:"omitempty,oneof=default restricted"`
	Entrypoint            yaml.Node         `yaml:"entrypoint,omitempty" json:"entrypoint,omitempty"`
	Cmd                   yaml.Node         `yaml:"cmd,omitempty" json:"cmd,omitempty"`
	Env                   map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	Labels                map[string]string `yaml:"labels,omitempty" json:"labels,omitempty"`
	Init                  yaml.Node         `yaml:"init,omitempty" json:"init,omitempty"`
	Mounts                []Mount           `yaml:"mounts,omitempty" json:"mounts,omitempty" validate:"dive"`
	PatchFiles            yaml.Node         `yaml:"patch_files,omitempty" json:"patch_files,omitempty"`
	Patches               yaml.Node         `yaml:"patches,omitempty" json:"patches,omitempty"`
	Network               *Network          `yaml:"network,omitempty" json:"network,omitempty"`
	Secrets               yaml.Node         `yaml:"secrets,omitempty" json:"secrets,omitempty"`
	SecretViolationAction string            `yaml:"secret_violation_action,omitempty" json:"secret_violation_action,omitempty" validate:"omitempty,oneof=block block-and-log block-and-terminate"`
	Scripts               map[string]string `yaml:"scripts,omitempty" json:"scripts,omitempty"`
	Ports                 []string          `yaml:"ports,omitempty" json:"ports,omitempty" validate:"dive,asb_port"`
}

// SandboxKeys lists the top-level keys msb 0.7.2 accepts in --conf, in the
// order its documentation gives them.
var SandboxKeys = []string{"image", "pull_policy", "registry", "cpus", "memory", "max_duration",
	"idle_timeout", "rlimits", "workdir", "shell", "user", "hostname", "security", "entrypoint",
	"cmd", "env", "labels", "init", "mounts", "patch_files", "patches", "network", "secrets",
	"secret_violation_action", "scripts", "ports"}

// Mount is one entry of `mounts`: the short string form "./src:/app[:ro]"
// or one of the object forms (bind, named, tmpfs, disk; exactly one).
type Mount struct {
	// Short is set when the entry was written as a string.
	Short string `yaml:"-" json:"-"`
	// Kind is bind, named, tmpfs or disk, as the loader read it (a bind of
	// "" is still a bind: msb resolves it to the config's folder).
	Kind string `yaml:"-" json:"-"`

	Bind     string     `yaml:"bind,omitempty" json:"bind,omitempty"`
	Named    string     `yaml:"named,omitempty" json:"named,omitempty"`
	Tmpfs    *TmpfsOpts `yaml:"tmpfs,omitempty" json:"tmpfs,omitempty"`
	Disk     string     `yaml:"disk,omitempty" json:"disk,omitempty"` // a disk image file on the host
	Target   string     `yaml:"target,omitempty" json:"target,omitempty"`
	Readonly bool       `yaml:"readonly,omitempty" json:"readonly,omitempty"`
	Noexec   bool       `yaml:"noexec,omitempty" json:"noexec,omitempty"`
	Nosuid   bool       `yaml:"nosuid,omitempty" json:"nosuid,omitempty"`
	Nodev    bool       `yaml:"nodev,omitempty" json:"nodev,omitempty"`
	Create   string     `yaml:"create,omitempty" json:"create,omitempty"` // named only: ensure-exists or create
	Format   string     `yaml:"format,omitempty" json:"format,omitempty"` // disk only: raw, qcow2, vmdk
	Fstype   string     `yaml:"fstype,omitempty" json:"fstype,omitempty"` // disk only, e.g. ext4
	// StatVirtualization (strict, relaxed, off) and HostPermissions
	// (private, mirror): bind and named only.
	StatVirtualization string `yaml:"stat_virtualization,omitempty" json:"stat_virtualization,omitempty"`
	HostPermissions    string `yaml:"host_permissions,omitempty" json:"host_permissions,omitempty"`
}

// TmpfsOpts are the options of a tmpfs mount.
type TmpfsOpts struct {
	Size string `yaml:"size,omitempty" json:"size,omitempty"`
}

// UnmarshalYAML accepts both the string and the object form.
func (m *Mount) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		m.Short = n.Value
		host, guest, ro, err := ParseShortMount(n.Value)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		m.Bind, m.Target, m.Readonly = host, guest, ro
		return nil
	}
	type plain Mount
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*m = Mount(p)
	return nil
}

// MarshalYAML writes a mount back in the form it was read in.
func (m Mount) MarshalYAML() (any, error) {
	if m.Short != "" {
		return m.Short, nil
	}
	type plain Mount
	return plain(m), nil
}

// ParseShortMount splits "HOST:GUEST[:ro|:rw]".
func ParseShortMount(s string) (host, guest string, readonly bool, err error) {
	parts := splitMount(s)
	switch {
	case len(parts) == 2:
	case len(parts) == 3 && (parts[2] == "ro" || parts[2] == "rw"):
		readonly = parts[2] == "ro"
	default:
		return "", "", false, fmt.Errorf("mount %q is not HOST:GUEST[:ro]", s)
	}
	if parts[0] == "" || parts[1] == "" || parts[1][0] != '/' {
		return "", "", false, fmt.Errorf("mount %q: the guest path must be absolute (e.g. ./src:/src)", s)
	}
	return parts[0], parts[1], readonly, nil
}

func splitMount(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == ':' {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// Network is `network`: a bare policy string (none, public, open) or an
// object. In YAML a string is kept in Policy with Short set.
type Network struct {
	Short bool `yaml:"-" json:"-"`

	Policy            string   `yaml:"policy,omitempty" json:"policy,omitempty" validate:"omitempty,oneof=none public open"`
	Allow             []string `yaml:"allow,omitempty" json:"allow,omitempty" validate:"dive,asb_host"`
	Deny              []string `yaml:"deny,omitempty" json:"deny,omitempty" validate:"dive,asb_host"`
	Ports             []string `yaml:"ports,omitempty" json:"ports,omitempty"`
	DNS               *DNS     `yaml:"dns,omitempty" json:"dns,omitempty"`
	TLS               *TLS     `yaml:"tls,omitempty" json:"tls,omitempty"`
	Strict            *bool    `yaml:"strict,omitempty" json:"strict,omitempty"`
	TrustHostCAs      *bool    `yaml:"trust_host_cas,omitempty" json:"trust_host_cas,omitempty"`
	MaxConnections    *int     `yaml:"max_connections,omitempty" json:"max_connections,omitempty"`
	MaxTCPConnections *int     `yaml:"max_tcp_connections,omitempty" json:"max_tcp_connections,omitempty"`
	MaxUDPConnections *int     `yaml:"max_udp_connections,omitempty" json:"max_udp_connections,omitempty"`
}

// DNS is network.dns.
type DNS struct {
	RebindProtection *bool    `yaml:"rebind_protection,omitempty" json:"rebind_protection,omitempty"`
	Nameservers      []string `yaml:"nameservers,omitempty" json:"nameservers,omitempty"`
	QueryTimeout     string   `yaml:"query_timeout,omitempty" json:"query_timeout,omitempty"`
}

// TLS is network.tls.
type TLS struct {
	Enabled        *bool    `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	Bypass         []string `yaml:"bypass,omitempty" json:"bypass,omitempty"`
	VerifyUpstream *bool    `yaml:"verify_upstream,omitempty" json:"verify_upstream,omitempty"`
	BlockQUIC      *bool    `yaml:"block_quic,omitempty" json:"block_quic,omitempty"`
}

// UnmarshalYAML accepts both the string and the object form.
func (nw *Network) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*nw = Network{Short: true, Policy: n.Value}
		return nil
	}
	type plain Network
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	*nw = Network(p)
	return nil
}

// MarshalYAML writes the string form back as a string.
func (nw Network) MarshalYAML() (any, error) {
	if nw.Short {
		return nw.Policy, nil
	}
	type plain Network
	return plain(nw), nil
}

// EgressDenied reports whether msb denies egress by default for this network:
// every form but `open` (and `public`, which allows the public internet).
func (nw *Network) EgressDenied() bool {
	if nw == nil {
		return false // msb's default with no network key allows the public group
	}
	return nw.Policy != "open" && nw.Policy != "public"
}
