package schema

import (
	"strings"
)

// Network modes accepted by `asb init --network`.
const (
	NetworkAllow  = "allow"  // deny by default, allow listed hosts only
	NetworkPublic = "public" // the whole public internet
	NetworkNone   = "none"   // no network at all
)

// SecretSpec is one credential binding requested with --secret NAME@HOST,…
type SecretSpec struct {
	Name  string   `flag:"name" yaml:"name" validate:"asb_secret"`
	Hosts []string `flag:"hosts" yaml:"hosts" validate:"required,min=1,dive,asb_host"`
}

// ParseSecretSpec parses NAME@HOST[,HOST…].
func ParseSecretSpec(s string) (SecretSpec, error) {
	name, hosts, ok := strings.Cut(s, "@")
	if !ok || name == "" || hosts == "" {
		return SecretSpec{}, &FieldError{Field: "--secret", Value: s,
			Fix: "use NAME@HOST[,HOST…], e.g. GITHUB_TOKEN@api.github.com,github.com"}
	}
	spec := SecretSpec{Name: name}
	for h := range strings.SplitSeq(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			spec.Hosts = append(spec.Hosts, h)
		}
	}
	return spec, nil
}

// InitOptions are everything `asb init` needs to render an outer folder. They
// are validated as a whole before any template runs.
type InitOptions struct {
	Agent     string       `flag:"agent" yaml:"agent" validate:"required"`
	Name      string       `flag:"name" yaml:"name" validate:"required,asb_name"`
	CPUs      int          `flag:"cpus" yaml:"cpus" validate:"asb_cpus"`
	Memory    string       `flag:"memory" yaml:"memory" validate:"asb_memory"`
	Secrets   []SecretSpec `flag:"secret" yaml:"secrets,omitempty" validate:"dive"`
	Network   string       `flag:"network" yaml:"network" validate:"oneof=allow balanced public none"`
	Allow     []string     `flag:"allow" yaml:"allow,omitempty" validate:"dive,asb_host"`
	Ports     []string     `flag:"port" yaml:"ports,omitempty" validate:"dive,asb_port"`
	Workspace string       `flag:"workspace" yaml:"-"` // recorded as the workspace's origin
	BaseImage string       `flag:"base-image" yaml:"base_image" validate:"required,asb_image"`
	// AgentVersion pins the agent package installed in the image.
	AgentVersion string `flag:"agent-version" yaml:"agent_version,omitempty" validate:"omitempty,asb_version"`
	// The VM's limits (schema/limits.go); "" is asb's default.
	IdleTimeout    string `flag:"idle-timeout" yaml:"idle_timeout,omitempty"`
	RootDisk       string `flag:"root-disk" yaml:"root_disk,omitempty"`
	TmpSize        string `flag:"tmp-size" yaml:"tmp_size,omitempty"`
	WorkspaceQuota string `flag:"workspace-quota" yaml:"workspace_quota,omitempty"`
	ContainerDisk  string `flag:"container-disk" yaml:"container_disk,omitempty"`
	// Also are further agents in the same VM (asb agent add): each with its
	// config folder, key, hosts, image layer and agent:NAME task.
	Also []string `flag:"-" yaml:"also,omitempty" validate:"dive,asb_project"`
	// Record is what the record (asb.yaml) says beyond the answers: asb's
	// version and the workspace's origin. Not a flag.
	Record *Record `flag:"-" yaml:"-" validate:"-"`
}

// Validate checks every field and the rules between fields.
func (o *InitOptions) Validate() error {
	if err := NewValidator().Struct(o); err != nil {
		return Explain(err, "--")
	}
	seen := map[string]bool{}
	for _, s := range o.Secrets {
		if seen[s.Name] {
			return &FieldError{Field: "--secret", Value: s.Name, Fix: "each secret may be bound once; merge the hosts into one --secret NAME@HOST1,HOST2"}
		}
		seen[s.Name] = true
	}
	if o.Network == NetworkNone && len(o.Secrets)+len(o.Allow) > 0 {
		return &FieldError{Field: "--network", Value: o.Network,
			Fix: "--network none blocks every host, so --allow and --secret hosts would be unreachable; use --network allow"}
	}
	for _, l := range o.limits() {
		if l[1] == "" {
			continue
		}
		if re := Limit(l[0], l[1]); re != nil {
			return RuleField("--"+l[0], re)
		}
	}
	var ports []PortSpec
	for _, s := range o.Ports {
		p, _ := Port(s) // each checked by its tag above
		ports = append(ports, p)
	}
	if _, re := PortConflict(ports); re != nil {
		return RuleField("--port", re)
	}
	return nil
}

// limits pairs each limit flag with its value.
func (o *InitOptions) limits() [][2]string {
	return [][2]string{{LimitIdleTimeout, o.IdleTimeout}, {LimitRootDisk, o.RootDisk}, {LimitTmpSize, o.TmpSize},
		{LimitWorkspaceQuota, o.WorkspaceQuota}, {LimitContainerDisk, o.ContainerDisk}}
}
