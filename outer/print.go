package outer

import (
	"fmt"
	"io"
	"strings"

	"github.com/agents-sandbox/asb/internal/termtext"
	"github.com/agents-sandbox/asb/schema"
)

// Print writes the whole boundary, one section after the other.
func (b *Boundary) Print(w io.Writer) {
	fmt.Fprintf(w, "What the agent in the VM can reach (%s):\n\n", b.Dir)
	b.PrintMounts(w)
	fmt.Fprintln(w)
	b.PrintNetwork(w)
	fmt.Fprintln(w)
	b.PrintPorts(w)
	fmt.Fprintln(w)
	b.PrintSecrets(w)
	fmt.Fprintln(w)
	b.PrintSettings(w)
	fmt.Fprintln(w)
	PrintLimits(w, b.Limits)
	for _, p := range b.Problems {
		fmt.Fprintf(w, "\n%s", p)
	}
	if len(b.Problems) > 0 {
		fmt.Fprintln(w, "\n(some of the files could not be read in full; `asb validate` explains)")
	}
}

// PrintMounts writes the files section.
func (b *Boundary) PrintMounts(w io.Writer) {
	fmt.Fprintln(w, "Files (guest path, access, from):")
	width := len(HomeTarget)
	for _, m := range b.Mounts {
		width = max(width, len(m.Guest))
	}
	for _, m := range b.Mounts {
		from := m.Source
		if m.Via != "" {
			from += " → " + m.Host // a link, which validate refuses
		}
		switch m.Kind {
		case "named":
			from = "volume " + m.Source
		case "tmpfs":
			from = "memory (tmpfs, emptied at each start)"
		case "disk":
			from = "disk image " + m.Source
		}
		note := ""
		switch m.Role {
		case "workspace":
			note = "  your project"
		case "agent-config":
			note = "  the agent's config: a read-only bind of this folder's copy (with what asb init --import-host-config took from your $HOME, never a credential); nothing of your host's own config is read at run time"
			if m.Access == "rw" {
				note = "  the agent's config, WRITABLE: the agent can change its own settings (add readonly: true)"
			}
		}
		fmt.Fprintf(w, "  %-*s  %s  %s%s", width, m.Guest, m.Access, from, note)
		alarm(w, boundaryNote(m))
		fmt.Fprintln(w, modesNote(m))
	}
	if h := b.Home; h != nil {
		vol := h.Volume
		if vol == "" {
			vol = "(not created yet)"
		}
		fmt.Fprintf(w, "  %-*s  rw  volume %s: %s\n", width, h.Guest, vol, h.Note)
	}
	if b.AgentConfig == nil {
		fmt.Fprintln(w, "  No agent config folder is mounted; nothing of your host's agent config is copied either.")
	}
	home := false
	for _, m := range b.Mounts {
		home = home || m.UnderHome
	}
	if b.reachesOther() {
		alarm(w, "More of the host than this folder's own files: see the lines in capitals above and under Other settings.")
		fmt.Fprintln(w, " Nothing else: not the rest of this folder (secrets.env, secrets.yaml).")
		return
	}
	if home {
		fmt.Fprintln(w, "  Nothing else of the host: not the rest of this folder (secrets.env, secrets.yaml), nothing else of your $HOME.")
		return
	}
	fmt.Fprintln(w, "  Nothing else of the host: not the rest of this folder (secrets.env, secrets.yaml), not your $HOME.")
}

// boundaryNote is what a mount adds to the boundary beyond this folder's
// own files ("" for nothing), shown in red.
func boundaryNote(m MountView) string {
	switch {
	case m.Refused != "":
		return "REFUSED: " + m.Refused + " (asb validate stops vm:create)"
	case m.UnderHome:
		return "UNDER YOUR $HOME: the VM sees this folder of your home (allowed by # " + schema.HomeConsent + ")"
	case m.Outside:
		return "OUTSIDE THIS FOLDER: the VM sees " + m.Host + " of your host (allowed only by # " + schema.HostConsent + ")"
	case m.Kind == "named":
		return "A VOLUME OF MSB'S STORE, outside this folder (allowed only by # " + schema.VolumeConsent + ")"
	}
	return ""
}

// modesNote says what becomes of the modes the VM sets in a writable bind.
func modesNote(m MountView) string {
	switch m.Modes {
	case "mirror":
		return "; the modes the VM sets (rwx, never setuid or the owner) reach your files"
	case "private":
		return "; files the VM makes are 0600 on your host, whatever mode it sets (add host_permissions: mirror to keep them)"
	}
	return ""
}

// PrintNetwork writes the egress section.
func (b *Boundary) PrintNetwork(w io.Writer) {
	n := b.Network
	fmt.Fprintf(w, "Network: %s.\n", n.Summary)
	switch n.Policy {
	case "public", "open", "default":
		alarm(w, "warning: the agent can send what it reads to any host")
		fmt.Fprintln(w, "; an allow list keeps it to the hosts it needs: asb network allow HOST after network: {allow: […]} in sandbox.yaml (asb init --network allow or balanced)")
	}
	if n.Policy == "allow-list" {
		fmt.Fprintln(w, "  allowed hosts:")
		for _, h := range n.Allow {
			fmt.Fprintf(w, "    %s\n", h)
		}
	}
	if len(n.Deny) > 0 {
		fmt.Fprintln(w, "  denied hosts:")
		for _, h := range n.Deny {
			fmt.Fprintf(w, "    %s\n", h)
		}
	}
}

// PrintPorts writes the forwarded ports.
func (b *Boundary) PrintPorts(w io.Writer) {
	if len(b.Ports) == 0 {
		fmt.Fprintln(w, "Ports: none forwarded (nothing on the host connects into the VM).")
		return
	}
	fmt.Fprintln(w, "Ports forwarded from the host into the VM:")
	for _, p := range b.Ports {
		note := ""
		if p.Bind != "127.0.0.1" {
			note = "  (reachable from other machines, not only this one)"
		}
		fmt.Fprintf(w, "  %s:%d → guest %d/%s%s\n", p.Bind, p.Host, p.Guest, p.Protocol, note)
	}
}

// PrintSecrets writes the secrets by name, never their values.
func (b *Boundary) PrintSecrets(w io.Writer) {
	if len(b.Secrets) == 0 {
		fmt.Fprintln(w, "Secrets: none.")
		return
	}
	fmt.Fprintln(w, "Secrets (the VM sees a placeholder; the proxy sends the value only to the hosts):")
	width := 4
	for _, s := range b.Secrets {
		width = max(width, len(s.Name))
	}
	for _, s := range b.Secrets {
		if s.Refused {
			fmt.Fprintf(w, "  %-*s", width, s.Name)
			alarm(w, "REFUSED: the binding has errors (asb validate says which; it stops vm:create)")
			fmt.Fprintln(w)
			continue
		}
		state, missing := "not set", ""
		if s.Set {
			state = "set in " + s.From
			if s.From == FromCommand {
				state = "from a command run on this host"
				if s.CommandMissing != "" {
					state, missing = state+"; ", "it cannot run here: "+s.CommandMissing
				}
			}
		}
		fmt.Fprintf(w, "  %-*s  → %s  (in %s; %s", width, s.Name, strings.Join(s.Hosts, ", "), s.Where(), state)
		if missing != "" {
			_ = termtext.Fprint(w, termtext.Alarm, missing)
		}
		fmt.Fprintln(w, ")")
	}
}

// Where says in which parts of a request the value is substituted.
func (s SecretView) Where() string {
	var parts []string
	if s.Headers {
		parts = append(parts, "headers")
	}
	if s.Query {
		parts = append(parts, "query")
	}
	if s.Body {
		parts = append(parts, "body")
	}
	if len(parts) == 0 {
		return "nowhere"
	}
	return strings.Join(parts, ", ")
}

// alarm writes "  " and s in asb's alarm style (bold red on a terminal
// that takes colour: termtext.Alarm); nothing when s is empty.
func alarm(w io.Writer, s string) {
	if s == "" {
		return
	}
	fmt.Fprint(w, "  ")
	_ = termtext.Fprint(w, termtext.Alarm, s)
}
