package schema

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The policy's rules, one per key. Each judges one value a folder asks
// for against every policy file in force (the machine's first) and names
// the first file and line that forbids it. The doors call them through
// CheckDir (checkPolicy) and asb init through the plan it would write.

// PolicyRefusal is a value the policy forbids.
type PolicyRefusal struct {
	What    string // the value, as the folder asks for it: "network public"
	Key     string // the policy key that forbids it
	Where   string // its file and line: /etc/asb/policy.yaml:3
	Allowed string // the key's value
	Machine bool   // the administrator's file
	Fix     string
}

func (r *PolicyRefusal) Error() string {
	who := "your policy"
	if r.Machine {
		who = "this machine's policy"
	}
	return fmt.Sprintf("%s is not allowed by %s %s (%s: %s)", r.What, who, r.Where, r.Key, r.Allowed)
}

func (l *PolicyLayer) refuse(key, what, allowed, fix string) *PolicyRefusal {
	return &PolicyRefusal{What: what, Key: key, Where: l.Where(key), Allowed: allowed, Machine: l.Machine, Fix: fix}
}

func listOrNone(l []string) string { return "[" + strings.Join(l, ", ") + "]" }

// PolicyModeOf is the network mode a policy names for sandbox.yaml's
// network, as msb resolves it: allow (an allow list), public (also no
// network key: msb's default), open, none.
func PolicyModeOf(nw *Network) string {
	switch {
	case nw == nil:
		return "public"
	case nw.Short:
		return nw.Policy
	case len(nw.Allow) > 0:
		return "allow"
	case nw.Policy == "":
		return "public"
	}
	return nw.Policy
}

// NetworkMode is the rule of network_modes.
func (p *Policy) NetworkMode(mode string) *PolicyRefusal {
	for _, l := range p.layers() {
		if l.NetworkModes != nil && !slices.Contains(l.NetworkModes, mode) {
			return l.refuse(PolicyNetworkModes, "network "+mode, listOrNone(l.NetworkModes),
				"use a network mode the policy allows (asb init --network allow, or network: {allow: [HOST, …]} in sandbox.yaml)")
		}
	}
	return nil
}

// AllowHost is the rule of never_allow for a host the VM may reach (an
// allow entry): it may neither cover nor fall under a host never allowed.
func (p *Policy) AllowHost(host string) *PolicyRefusal {
	for _, l := range p.layers() {
		for _, n := range l.NeverAllow {
			if EntryCovers(host, n) || EntryCovers(n, host) {
				return l.refuse(PolicyNeverAllow, "allowing "+host, listOrNone(l.NeverAllow), "remove "+host+" from the allow list (asb network deny "+host+")")
			}
		}
	}
	return nil
}

// Reaches is the rule of never_allow for a network that is not an allow
// list (public, open): it reaches every host, so each host never allowed
// must be in its deny list.
func (p *Policy) Reaches(mode string, deny []string) *PolicyRefusal {
	if mode != "public" && mode != "open" {
		return nil
	}
	for _, l := range p.layers() {
		for _, n := range l.NeverAllow {
			if !slices.ContainsFunc(deny, func(d string) bool { return EntryCovers(d, n) }) {
				return l.refuse(PolicyNeverAllow, "network "+mode+" (which reaches "+n+")", listOrNone(l.NeverAllow),
					"deny it (asb network deny "+n+"), or use an allow list")
			}
		}
	}
	return nil
}

// SecretHost is the rule of secret_hosts (and never_allow) for a host a
// secret's value may be sent to.
func (p *Policy) SecretHost(secret, host string) *PolicyRefusal {
	for _, l := range p.layers() {
		if l.SecretHosts != nil && !slices.ContainsFunc(l.SecretHosts, func(h string) bool { return EntryCovers(h, host) }) {
			return l.refuse(PolicySecretHosts, "sending "+secret+" to "+host, listOrNone(l.SecretHosts),
				"send the secret only to hosts the policy lists (asb secret add "+secret+" --allow HOST)")
		}
	}
	if r := p.AllowHost(host); r != nil {
		r.What = "sending " + secret + " to " + host
		return r
	}
	return nil
}

// Image is the rule of images_from for an image reference (one that
// toolchain/Dockerfile's build pulls, sandbox.yaml's image), compared in
// full form too (debian:trixie-slim is docker.io/library/debian:trixie-slim).
func (p *Policy) Image(ref string) *PolicyRefusal {
	for _, l := range p.layers() {
		if l.ImagesFrom != nil && !slices.ContainsFunc(l.ImagesFrom, func(pre string) bool { return ImageFrom(pre, ref) }) {
			return l.refuse(PolicyImagesFrom, "the image "+ref, listOrNone(l.ImagesFrom),
				"build on an image from there (asb init --base-image REF, or ARG BASE_IMAGE in toolchain/Dockerfile)")
		}
	}
	return nil
}

// JudgesImages reports whether a layer sets images_from.
func (p *Policy) JudgesImages() bool {
	return slices.ContainsFunc(p.layers(), func(l *PolicyLayer) bool { return l.ImagesFrom != nil })
}

// ImageFrom reports whether ref comes from prefix (a registry, a
// repository or a whole reference). A ref with a $ left in it (an ARG
// without a default) comes from nowhere: what it expands to could name
// another registry (debian${X} with X=.evil.example/x).
func ImageFrom(prefix, ref string) bool {
	if strings.Contains(ref, "$") {
		return false
	}
	for _, r := range []string{ref, FullImageRef(ref)} {
		for _, pre := range []string{prefix, FullImageRef(prefix)} {
			if r == pre || strings.HasPrefix(r, pre) && (strings.HasSuffix(pre, "/") || strings.ContainsRune("/:@", rune(r[len(pre)]))) {
				return true
			}
		}
	}
	return false
}

// FullImageRef is ref as a registry names it: docker.io/library/ before a
// bare name, docker.io/ before a repository of Docker Hub.
func FullImageRef(ref string) string {
	first, _, ok := strings.Cut(ref, "/")
	switch {
	case !ok:
		return "docker.io/library/" + ref
	case strings.ContainsAny(first, ".:") || first == "localhost":
		return ref
	}
	return "docker.io/" + ref
}

// HostBind is the rule of host_binds for a bind of a host folder outside
// the outer folder.
func (p *Policy) HostBind(host string) *PolicyRefusal {
	for _, l := range p.layers() {
		if l.HostBinds != nil && !*l.HostBinds {
			return l.refuse(PolicyHostBinds, "mounting the host folder "+host, "false",
				"mount only folders inside the outer folder")
		}
	}
	return nil
}

// Port is the rule of ports for a forwarded port.
func (p *Policy) Port(spec string) *PolicyRefusal {
	for _, l := range p.layers() {
		if l.Ports != nil && !*l.Ports {
			return l.refuse(PolicyPorts, "forwarding the port "+spec, "false", "remove the port (asb port rm "+spec+")")
		}
	}
	return nil
}

// CPUs is the rule of max.cpus.
func (p *Policy) CPUs(n int) *PolicyRefusal {
	for _, l := range p.layers() {
		if l.MaxCPUs > 0 && n > l.MaxCPUs {
			return l.refuse(PolicyMax+".cpus", strconv.Itoa(n)+" CPUs", strconv.Itoa(l.MaxCPUs),
				"give the VM at most "+strconv.Itoa(l.MaxCPUs)+" CPUs (cpus: in sandbox.yaml)")
		}
	}
	return nil
}

// Memory is the rule of max.memory.
func (p *Policy) Memory(size string) *PolicyRefusal {
	return p.size("memory", "memory "+size, size, func(l *PolicyLayer) string { return l.MaxMemory },
		"give the VM less memory (memory: in sandbox.yaml)")
}

// Disk is the rule of max.disk for one of the VM's disks (limit is its
// name: root-disk, container-disk).
func (p *Policy) Disk(limit, size string) *PolicyRefusal {
	return p.size("disk", limit+" "+size, size, func(l *PolicyLayer) string { return l.MaxDisk },
		"asb limit set "+limit+" SIZE with a smaller size")
}

func (p *Policy) size(key, what, size string, max func(*PolicyLayer) string, fix string) *PolicyRefusal {
	mib, err := ParseSize(size)
	if err != nil {
		return nil // the value's own rule refuses it
	}
	for _, l := range p.layers() {
		if m := max(l); m != "" {
			if limit, _ := ParseSize(m); mib > limit {
				return l.refuse(PolicyMax+"."+key, what, m, fix)
			}
		}
	}
	return nil
}

func (p *Policy) layers() []*PolicyLayer {
	if p == nil {
		return nil
	}
	return p.Layers
}
